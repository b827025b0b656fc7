//! Edits of a TOML document that touch only the keys they name, through
//! `toml_edit`, which keeps every comment, key and layout it does not touch.

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, Value};

/// `text` as a document; `Err` is the parser's message.
pub fn parse(text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>()
        .map_err(|error| format!("it is not TOML ({})", error.to_string().trim_end()))
}

/// The table at `path` under `item`, made where missing: implicit, so that
/// a table holding only other tables gets no header of its own.
pub fn table<'a>(mut item: &'a mut Item, path: &[&str]) -> Result<&'a mut Item, String> {
    for (depth, key) in path.iter().enumerate() {
        let fresh = match item {
            Item::Table(_) => {
                let mut table = Table::new();
                table.set_implicit(true);
                Item::Table(table)
            }
            Item::Value(Value::InlineTable(_)) => {
                Item::Value(Value::InlineTable(InlineTable::new()))
            }
            _ => return Err(not_a_table(&path[..depth])),
        };
        let Some(parent) = item.as_table_like_mut() else {
            return Err(not_a_table(&path[..depth]));
        };
        item = parent.entry(key).or_insert(fresh);
    }
    match item {
        Item::Table(_) | Item::Value(Value::InlineTable(_)) => Ok(item),
        _ => Err(not_a_table(path)),
    }
}

fn not_a_table(path: &[&str]) -> String {
    format!("{} is not a table", dotted(path))
}

/// `path` as TOML writes it: `plugins."io.containerd.grpc.v1.cri"`.
pub fn dotted(path: &[&str]) -> String {
    let keys: Vec<String> = path
        .iter()
        .map(|key| toml_edit::Key::new(*key).display_repr().into_owned())
        .collect();
    keys.join(".")
}

/// Whether the table at `path` under `item` exists.
pub fn has(item: &Item, path: &[&str]) -> bool {
    let mut item = item;
    for key in path {
        match item.get(key) {
            Some(next) => item = next,
            None => return false,
        }
    }
    true
}

/// Sets `key` of `table` to `value`, unless it holds that already; an old
/// value's spacing and trailing comment stay.
pub fn set(table: &mut Item, key: &str, value: Value) -> Result<(), String> {
    let Some(table) = table.as_table_like_mut() else {
        return Err(format!("cannot set {key}: not in a table"));
    };
    match table.get_mut(key) {
        Some(Item::Value(old)) => {
            if !same(old, &value) {
                let decor = old.decor().clone();
                *old = value;
                *old.decor_mut() = decor;
            }
        }
        Some(_) => return Err(format!("{key} is a table, not a value")),
        None => {
            table.insert(key, Item::Value(value));
        }
    }
    Ok(())
}

/// Whether two values are equal as TOML reads them, whatever their layout
/// or quotes.
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a.value() == b.value(),
        (Value::Integer(a), Value::Integer(b)) => a.value() == b.value(),
        (Value::Boolean(a), Value::Boolean(b)) => a.value() == b.value(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b.iter()).all(|(a, b)| same(a, b))
        }
        _ => false,
    }
}

/// Makes the array `key` of `table` hold the string `item`, at its end
/// when missing, with the array made when `key` is; whether it changed.
pub fn include(table: &mut Item, key: &str, item: &str) -> Result<bool, String> {
    let Some(table) = table.as_table_like_mut() else {
        return Err(format!("cannot set {key}: not in a table"));
    };
    let array = match table.get_mut(key) {
        None => {
            table.insert(key, Item::Value(strings([item])));
            return Ok(true);
        }
        Some(Item::Value(Value::Array(array))) => array,
        Some(_) => return Err(format!("{key} is not a list")),
    };
    if array.iter().any(|old| old.as_str() == Some(item)) {
        return Ok(false);
    }
    if array.iter().any(|old| old.as_str().is_none()) {
        return Err(format!("{key} is not a list of strings"));
    }
    array.push(item);
    Ok(true)
}

/// Indents `key` of the table at `item` as `layout` says its keys are.
pub fn indent_key(item: &mut Item, key: &str, layout: &Layout) {
    if let Some(mut key) = item.as_table_mut().and_then(|table| table.key_mut(key)) {
        key.leaf_decor_mut().set_prefix(layout.key.clone());
    }
}

/// An array of strings, as `key = ["a", "b"]`.
pub fn strings<'a>(items: impl IntoIterator<Item = &'a str>) -> Value {
    Value::Array(items.into_iter().collect::<Array>())
}

/// How a table is indented: its header, and its first key.
#[derive(Clone, Default)]
pub struct Layout {
    header: String,
    key: String,
}

/// The indentation of `item`'s table, `None` for an inline one.
pub fn layout_of(item: &Item) -> Option<Layout> {
    let table = item.as_table()?;
    let last_line = |decor: &toml_edit::Decor| {
        let prefix = decor.prefix().and_then(|p| p.as_str()).unwrap_or("");
        prefix.rsplit('\n').next().unwrap_or("").to_owned()
    };
    let key = table
        .iter()
        .find_map(|(key, _)| table.key(key))
        .map(|key| last_line(key.leaf_decor()))
        .unwrap_or_default();
    Some(Layout {
        header: last_line(table.decor()),
        key,
    })
}

/// Indents the table we made at `item` as `layout` says, a blank line
/// before its header.
pub fn lay_out(item: &mut Item, layout: &Layout) {
    let Some(table) = item.as_table_mut() else {
        return;
    };
    table.decor_mut().set_prefix(format!("\n{}", layout.header));
    let keys: Vec<String> = table.iter().map(|(key, _)| key.to_owned()).collect();
    for key in keys {
        if let Some(mut key) = table.key_mut(&key) {
            key.leaf_decor_mut().set_prefix(layout.key.clone());
        }
    }
}
