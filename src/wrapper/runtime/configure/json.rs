//! Edits of a JSON document that touch only the members they name: every
//! other byte (order, indentation, line breaks, the way a list is laid
//! out) stays, so that a removal can give back exactly what an insertion
//! took. The text is checked by serde_json first; the scanner below then
//! only finds where each member of an object starts and ends.

use serde_json::Value;

/// One member of an object: byte offsets into the text.
#[derive(Debug, Clone)]
pub struct Member {
    pub key: String,
    key_start: usize,
    key_end: usize,
    value_start: usize,
    value_end: usize,
}

/// An object: where its braces are, and its members in order.
#[derive(Debug)]
pub struct Object {
    open: usize,
    close: usize,
    pub members: Vec<Member>,
}

/// `text` as JSON, or why it is not.
pub fn parse(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|error| format!("it is not JSON ({error})"))
}

/// The top object of `text` (checked JSON).
pub fn top(text: &str) -> Result<Object, String> {
    let Value::Object(_) = parse(text)? else {
        return Err("it is not a JSON object".into());
    };
    object_at(text, skip_space(text.as_bytes(), 0))
}

/// The object that is the value of `member`, or `Err(shown)`'s message.
pub fn object_of(text: &str, member: &Member, shown: &str) -> Result<Object, String> {
    match text.as_bytes().get(member.value_start) {
        Some(b'{') => object_at(text, member.value_start),
        _ => Err(format!("\"{shown}\" is not an object")),
    }
}

impl Object {
    /// The member named `key` (the last, as Go's decoder takes it).
    pub fn get(&self, key: &str) -> Option<&Member> {
        self.members.iter().rev().find(|m| m.key == key)
    }
}

impl Member {
    /// The member's value, parsed.
    pub fn value(&self, text: &str) -> Value {
        serde_json::from_str(&text[self.value_start..self.value_end]).unwrap_or(Value::Null)
    }
}

/// `text` with `member`'s value replaced by `value`, laid out where it is.
pub fn replace(text: &str, member: &Member, value: &Value) -> String {
    let indent = unit(text);
    let written = match line_indent(text, member.key_start) {
        Some(base) => pretty(value, &indent, base),
        None => compact(value),
    };
    splice(text, member.value_start, member.value_end, &written)
}

/// `text` with the member `key: value` added at the end of `object`, laid
/// out as the members before it are.
pub fn insert(text: &str, object: &Object, key: &str, value: &Value) -> String {
    let name = compact(&Value::String(key.to_owned()));
    let indent = unit(text);
    let Some(last) = object.members.last() else {
        // `{}`: its members go on lines of their own, one level in.
        let base = line_indent(text, object.open).unwrap_or("");
        let inner = format!("{base}{indent}");
        let member = format!("{name}: {}", pretty(value, &indent, &inner));
        let body = format!("\n{inner}{member}\n{base}");
        return splice(text, object.open + 1, object.close, &body);
    };
    // What comes before a member, and between its key and its value, as
    // the last one has it.
    let before = match object.members.len() {
        1 => &text[object.open + 1..last.key_start],
        n => {
            let previous = &object.members[n - 2];
            let comma = text[previous.value_end..last.key_start]
                .find(',')
                .map_or(previous.value_end, |at| previous.value_end + at + 1);
            &text[comma..last.key_start]
        }
    };
    let colon = &text[last.key_end..last.value_start];
    let written = match line_indent(text, last.key_start) {
        Some(base) if before.contains('\n') => pretty(value, &indent, base),
        _ => compact(value),
    };
    let member = format!(",{before}{name}{colon}{written}");
    splice(text, last.value_end, last.value_end, &member)
}

/// `text` without `object`'s member at `index`, and without what was put
/// between it and its neighbours: the inverse of [`insert`].
pub fn remove(text: &str, object: &Object, index: usize) -> String {
    let members = &object.members;
    let (start, end) = match index {
        0 if members.len() == 1 => (object.open + 1, object.close),
        0 => (members[0].key_start, members[1].key_start),
        i => (members[i - 1].value_end, members[i].value_end),
    };
    splice(text, start, end, "")
}

fn splice(text: &str, start: usize, end: usize, with: &str) -> String {
    format!("{}{with}{}", &text[..start], &text[end..])
}

/// The indentation of the line at `at` when only blanks come before it on
/// that line.
fn line_indent(text: &str, at: usize) -> Option<&str> {
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let lead = &text[start..at];
    lead.bytes()
        .all(|b| b == b' ' || b == b'\t')
        .then_some(lead)
}

/// The indentation a level adds: the file's first indented line's (four
/// spaces for a new file, as Docker's documentation writes daemon.json).
fn unit(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|line| &line[..line.len() - line.trim_start().len()])
        .find(|indent| !indent.is_empty())
        .unwrap_or("    ")
        .to_owned()
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// `value` pretty-printed with `indent` for each level, its later lines
/// after `base`: serde_json's two spaces a level, changed line by line (a
/// JSON string holds no raw line break).
fn pretty(value: &Value, indent: &str, base: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    let lines: Vec<String> = pretty
        .lines()
        .enumerate()
        .map(|(n, line)| {
            let body = line.trim_start_matches(' ');
            let lead = if n == 0 { "" } else { base };
            format!(
                "{lead}{}{body}",
                indent.repeat((line.len() - body.len()) / 2)
            )
        })
        .collect();
    lines.join("\n")
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The end of the string starting at `at` (its opening quote).
fn string_end(bytes: &[u8], mut at: usize) -> usize {
    at += 1;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    at
}

/// The end of the value starting at `at`.
fn value_end(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at) {
        Some(b'"') => string_end(bytes, at),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut i = at;
            while let Some(&b) = bytes.get(i) {
                match b {
                    b'"' => {
                        i = string_end(bytes, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            i
        }
        _ => {
            let mut i = at;
            while bytes
                .get(i)
                .is_some_and(|b| !b.is_ascii_whitespace() && !b",}]".contains(b))
            {
                i += 1;
            }
            i
        }
    }
}

/// The object whose `{` is at `open`, in text serde_json has accepted.
fn object_at(text: &str, open: usize) -> Result<Object, String> {
    let bytes = text.as_bytes();
    let malformed = || "it is not JSON".to_string();
    if bytes.get(open) != Some(&b'{') {
        return Err(malformed());
    }
    let mut members = Vec::new();
    let mut at = skip_space(bytes, open + 1);
    loop {
        match bytes.get(at) {
            Some(b'}') => break,
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b'"') => {
                let key_start = at;
                let key_end = string_end(bytes, at);
                let key: String =
                    serde_json::from_str(&text[key_start..key_end]).map_err(|_| malformed())?;
                at = skip_space(bytes, key_end);
                if bytes.get(at) != Some(&b':') {
                    return Err(malformed());
                }
                let value_start = skip_space(bytes, at + 1);
                let value_end = value_end(bytes, value_start);
                members.push(Member {
                    key,
                    key_start,
                    key_end,
                    value_start,
                    value_end,
                });
                at = skip_space(bytes, value_end);
            }
            _ => return Err(malformed()),
        }
    }
    Ok(Object {
        open,
        close: at,
        members,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_insert_is_laid_out_as_its_neighbours_and_a_remove_undoes_it() {
        for text in [
            "{\n\t\"a\": [1, 2],\n\t\"b\": {\"c\": \"}\\\"\"}\n}\n",
            "{\"a\": 1}",
            "{ \"a\" : 1 , \"b\":2 }",
            "{\n    \"only\": true\n}\n",
            "{}\n",
        ] {
            let top = top(text).unwrap();
            let new = insert(text, &top, "new", &json!({"path": "x", "args": ["y"]}));
            let value = parse(&new).unwrap();
            assert_eq!(value["new"], json!({"path": "x", "args": ["y"]}), "{new}");
            let after = self::top(&new).unwrap();
            let index = after.members.len() - 1;
            assert_eq!(remove(&new, &after, index), text, "{new}");
        }
        let text = "{\n\t\"a\": [1, 2],\n\t\"b\": 3\n}\n";
        let new = insert(text, &top(text).unwrap(), "c", &json!({"d": 4}));
        assert_eq!(
            new,
            "{\n\t\"a\": [1, 2],\n\t\"b\": 3,\n\t\"c\": {\n\t\t\"d\": 4\n\t}\n}\n"
        );
        assert_eq!(
            insert("{}", &top("{}").unwrap(), "a", &json!(1)),
            "{\n    \"a\": 1\n}"
        );
    }

    #[test]
    fn the_first_of_several_members_goes_with_what_follows_it() {
        let text = "{\n  \"a\": 1,\n  \"b\": 2\n}";
        assert_eq!(remove(text, &top(text).unwrap(), 0), "{\n  \"b\": 2\n}");
        let member = top(text).unwrap().get("b").unwrap().clone();
        assert_eq!(member.value(text), json!(2));
        assert_eq!(
            replace(text, &member, &json!([3])),
            "{\n  \"a\": 1,\n  \"b\": [\n    3\n  ]\n}"
        );
    }
}
