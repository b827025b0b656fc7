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

/// What a registration writes after an engine's default that it
/// replaced, followed by the old value, so that a removal can put it back
/// byte for byte.
const WAS: &str = " # eatmydata-runtime configure replaced: ";

/// Sets `key` of `table` to the string `name`, noting the value it
/// replaces (as written) in a comment after it; a missing key is added.
pub fn set_noting(table: &mut Item, key: &str, name: &str) -> Result<(), String> {
    let Some(table) = table.as_table_like_mut() else {
        return Err(format!("cannot set {key}: not in a table"));
    };
    match table.get_mut(key) {
        Some(Item::Value(old)) if old.as_str() == Some(name) => {}
        // Only a runtime's name is replaced, and so noted to come back.
        Some(Item::Value(old)) if old.as_str().is_none() => {
            let mut bare = old.clone();
            bare.decor_mut().clear();
            return Err(format!("{key} is {bare}, not a runtime's name (a string)"));
        }
        Some(Item::Value(old)) => {
            let decor = old.decor().clone();
            let mut bare = old.clone();
            bare.decor_mut().clear();
            let suffix = decor.suffix().and_then(|s| s.as_str()).unwrap_or("");
            let suffix = format!("{suffix}{WAS}{bare}");
            *old = Value::from(name);
            if let Some(prefix) = decor.prefix() {
                old.decor_mut().set_prefix(prefix.clone());
            }
            old.decor_mut().set_suffix(suffix);
        }
        Some(_) => return Err(format!("{key} is a table, not a value")),
        None => {
            table.insert(key, Item::Value(Value::from(name)));
        }
    }
    Ok(())
}

/// Undoes [`set_noting`]: when `key` of the table at `path` is `name`,
/// the value it replaced comes back with the comment as it was, or the
/// key goes when it replaced none; whether it changed. A noted value
/// that is not a string is refused: set_noting notes only names.
pub fn restore(root: &mut Item, path: &[&str], key: &str, name: &str) -> Result<bool, String> {
    let Some(table) = find_mut(root, path).and_then(Item::as_table_like_mut) else {
        return Ok(false);
    };
    let Some(Item::Value(value)) = table.get_mut(key) else {
        return Ok(false);
    };
    if value.as_str() != Some(name) {
        return Ok(false);
    }
    let suffix = value.decor().suffix().and_then(|s| s.as_str());
    let Some((theirs, was)) = suffix.and_then(|s| s.rsplit_once(WAS)) else {
        table.remove(key);
        return Ok(true);
    };
    let mut old: Value = was
        .trim()
        .parse()
        .map_err(|_| format!("the value noted after {key} is not TOML: {was}"))?;
    // What set_noting replaced is a runtime's name: anything else in that
    // comment (a table, a list, a number) was not written by it, and is
    // not made the engine's setting.
    if old.as_str().is_none() {
        return Err(format!(
            "the value noted after {key} is not a runtime's name (a string), so it is not \
             put back: {}",
            was.trim()
        ));
    }
    old.decor_mut().clear();
    let theirs = theirs.to_owned();
    if let Some(prefix) = value.decor().prefix().cloned() {
        old.decor_mut().set_prefix(prefix);
    }
    old.decor_mut().set_suffix(theirs);
    *value = old;
    Ok(true)
}

/// The item at `path` under `item`, if there is one.
pub fn find_mut<'a>(item: &'a mut Item, path: &[&str]) -> Option<&'a mut Item> {
    path.iter()
        .try_fold(item, |item, key| item.as_table_like_mut()?.get_mut(key))
}

/// Removes `key` of the table at `path`, then each table of `path` that
/// this left empty and that registration may have made: one with no
/// header of its own (implicit, as [`table`] makes them), or the last
/// header of the file with no comment above it (where toml_edit puts a
/// table it adds). Any other header stays, empty. Whether anything went.
pub fn remove_pruning(root: &mut Item, path: &[&str], key: &str) -> bool {
    let Some(table) = find_mut(root, path).and_then(Item::as_table_like_mut) else {
        return false;
    };
    if table.remove(key).is_none() {
        return false;
    }
    for depth in (1..=path.len()).rev() {
        let last = last_position(root);
        let (parent, leaf) = (&path[..depth - 1], path[depth - 1]);
        let Some(parent) = find_mut(root, parent).and_then(Item::as_table_like_mut) else {
            break;
        };
        let Some(Item::Table(table)) = parent.get(leaf) else {
            break;
        };
        let prefix = table.decor().prefix().and_then(|p| p.as_str());
        let bare = prefix.is_none_or(|p| p.trim().is_empty());
        let position = table.position();
        let made = table.is_implicit() || (bare && position.is_some() && position == last);
        if !table.is_empty() || !made {
            break;
        }
        parent.remove(leaf);
    }
    true
}

/// The position of the last table header in `item`.
fn last_position(item: &Item) -> Option<isize> {
    let table = item.as_table()?;
    let own = (!table.is_implicit()).then(|| table.position()).flatten();
    table
        .iter()
        .filter_map(|(_, item)| last_position(item))
        .chain(own)
        .max()
}

/// Whether nothing but the keys `ignoring` is left in `text`: no other
/// key, and no comment; at most empty table headers.
pub fn holds_nothing(text: &str, ignoring: &[&str]) -> bool {
    let Ok(mut doc) = parse(text) else {
        return false;
    };
    for key in ignoring {
        doc.remove(key);
    }
    !has_values(doc.as_item()) && !doc.to_string().contains('#')
}

fn has_values(item: &Item) -> bool {
    match item.as_table_like() {
        Some(table) => table.iter().any(|(_, item)| match item {
            Item::Table(_) => has_values(item),
            Item::None => false,
            _ => true,
        }),
        None => !item.is_none(),
    }
}
