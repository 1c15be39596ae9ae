//! Scenarios: a sequence of requests per virtual user, with values captured from
//! JSON answers and put into later requests through `{{name}}` templates.
//!
//! Everything that can be checked before the run is checked here (unknown
//! variables, a value used before any step captures it, bad paths), so a run
//! only fails for reasons the server gives.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use crate::http1;

/// Built-in variables, always defined: virtual user number, iteration number of
/// that user, a run id unique to this run, and a fresh random number per use.
pub const BUILTINS: [&str; 4] = ["vu", "iter", "run", "rand"];
const VAR_VU: usize = 0;
const VAR_ITER: usize = 1;
const VAR_RUN: usize = 2;
const VAR_RAND: usize = 3;

/// A scenario as given by the Python side (JSON).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    pub steps: Vec<StepSpec>,
    #[serde(default)]
    pub vars: Vec<(String, String)>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    pub name: String,
    #[serde(default = "default_method")]
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    #[serde(default)]
    pub body: String,
    /// variable name -> JSON path in the answer (`a.b.0` or `/a/b/0`).
    #[serde(default)]
    pub captures: Vec<(String, String)>,
    /// JSON path -> expected value (string form); a mismatch fails the step.
    #[serde(default)]
    pub expect: Vec<(String, String)>,
    /// The status the answer must have (none: any 2xx).
    #[serde(default)]
    pub status: Option<u16>,
    /// Texts the answer's body must contain (raw bytes, JSON or not).
    #[serde(default)]
    pub body_contains: Vec<String>,
    /// Think time after the step, in milliseconds (the virtual user pauses).
    #[serde(default)]
    pub think_ms: f64,
}

fn default_method() -> String {
    "GET".to_string()
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(Vec<u8>),
    Var { index: usize, url: bool },
}

/// A string with `{{var}}` / `{{var|url}}` holes, compiled once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(Vec<Segment>);

/// A compiled step, ready to render many times without parsing.
#[derive(Debug, Clone)]
pub struct Step {
    pub name: String,
    pub method: String,
    pub head_request: bool,
    path: Template,
    headers: Vec<(String, Template)>,
    body: Template,
    user_host: bool,
    user_agent: bool,
    /// (variable index, JSON pointer)
    captures: Vec<(usize, String)>,
    /// (JSON pointer, expected)
    expect: Vec<(String, String)>,
    status: Option<u16>,
    body_contains: Vec<Vec<u8>>,
    pub think: Option<std::time::Duration>,
}

impl Step {
    /// The answer's body is needed (captures or checks).
    pub fn reads_body(&self) -> bool {
        !self.captures.is_empty() || !self.expect.is_empty() || !self.body_contains.is_empty()
    }

    /// Whether the answer's status is the one the step wants (any 2xx by default).
    pub fn accepts(&self, status: u16) -> bool {
        match self.status {
            Some(want) => status == want,
            None => (200..300).contains(&status),
        }
    }

    /// Why a status is refused, for the first check error.
    pub fn status_error(&self, status: u16) -> String {
        match self.status {
            Some(want) => format!("step '{}': status {status}, expected {want}", self.name),
            None => format!("step '{}': status {status}, expected 2xx", self.name),
        }
    }
}

/// A compiled scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub steps: Vec<Step>,
    pub var_names: Vec<String>,
    constants: Vec<(usize, Vec<u8>)>,
}

/// Values of one virtual user's variables.
pub struct Vars {
    values: Vec<Option<Vec<u8>>>,
    rng: u64,
    scratch: Vec<u8>,
}

fn dotted_to_pointer(path: &str) -> String {
    if path.is_empty() || path.starts_with('/') {
        return path.to_string();
    }
    let mut out = String::with_capacity(path.len() + 1);
    for part in path.split('.') {
        out.push('/');
        out.push_str(&part.replace('~', "~0").replace('/', "~1"));
    }
    out
}

impl Template {
    /// Compile `text`, resolving names with `lookup`.
    pub fn compile(
        text: &str,
        mut lookup: impl FnMut(&str) -> Result<usize, String>,
    ) -> Result<Template, String> {
        let mut segs = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                segs.push(Segment::Literal(rest.as_bytes()[..open].to_vec()));
            }
            let after = &rest[open + 2..];
            let close = after
                .find("}}")
                .ok_or_else(|| format!("unclosed '{{{{' in '{text}'"))?;
            let inner = after[..close].trim();
            let (name, url) = match inner.split_once('|') {
                Some((n, f)) if f.trim() == "url" => (n.trim(), true),
                Some((_, f)) => return Err(format!("unknown filter '{}' in '{text}'", f.trim())),
                None => (inner, false),
            };
            if name.is_empty() {
                return Err(format!("empty '{{{{}}}}' in '{text}'"));
            }
            segs.push(Segment::Var {
                index: lookup(name)?,
                url,
            });
            rest = &after[close + 2..];
        }
        if !rest.is_empty() {
            segs.push(Segment::Literal(rest.as_bytes().to_vec()));
        }
        Ok(Template(segs))
    }

    fn render(&self, vars: &mut Vars, out: &mut Vec<u8>) {
        for seg in &self.0 {
            match seg {
                Segment::Literal(b) => out.extend_from_slice(b),
                Segment::Var { index, url } => {
                    vars.fill(*index);
                    let Vars {
                        values, scratch, ..
                    } = vars;
                    let value: &[u8] = if *index == VAR_RAND {
                        scratch
                    } else {
                        values[*index].as_deref().unwrap_or(b"")
                    };
                    if *url {
                        percent_encode(value, out);
                    } else {
                        out.extend_from_slice(value);
                    }
                }
            }
        }
    }
}

fn percent_encode(value: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in value {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b);
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
    }
}

impl Scenario {
    pub fn compile(spec: &ScenarioSpec) -> Result<Scenario, String> {
        if spec.steps.is_empty() {
            return Err("a scenario needs at least one step".into());
        }
        let mut var_names: Vec<String> = BUILTINS.iter().map(|s| s.to_string()).collect();
        let mut known: HashMap<String, usize> = var_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        let mut constants = Vec::new();
        for (name, value) in &spec.vars {
            check_var_name(name)?;
            if known.contains_key(name) {
                return Err(format!("variable '{name}' is defined twice or is built in"));
            }
            known.insert(name.clone(), var_names.len());
            constants.push((var_names.len(), value.as_bytes().to_vec()));
            var_names.push(name.clone());
        }
        // Every captured name gets a slot up front; `available` tracks which are
        // set by the time a step runs.
        let mut captured_by: HashMap<String, usize> = HashMap::new();
        for (si, step) in spec.steps.iter().enumerate() {
            for (name, _) in &step.captures {
                check_var_name(name)?;
                if BUILTINS.contains(&name.as_str()) || spec.vars.iter().any(|(n, _)| n == name) {
                    return Err(format!(
                        "step '{}' captures '{name}', which is already defined",
                        step.name
                    ));
                }
                captured_by.entry(name.clone()).or_insert(si);
                if !known.contains_key(name) {
                    known.insert(name.clone(), var_names.len());
                    var_names.push(name.clone());
                }
            }
        }
        let mut steps = Vec::with_capacity(spec.steps.len());
        for (si, s) in spec.steps.iter().enumerate() {
            let lookup = |name: &str| -> Result<usize, String> {
                let idx = *known
                    .get(name)
                    .ok_or_else(|| format!("step '{}' uses unknown variable '{name}'", s.name))?;
                if let Some(&first) = captured_by.get(name) {
                    if first >= si {
                        return Err(format!(
                            "step '{}' uses '{{{{{name}}}}}' before any earlier step captures it",
                            s.name
                        ));
                    }
                }
                Ok(idx)
            };
            if !s.path.starts_with('/') {
                return Err(format!(
                    "step '{}': path must start with '/' (got '{}')",
                    s.name, s.path
                ));
            }
            let check = http1::RequestSpec {
                method: s.method.clone(),
                path: "/".into(),
                headers: s.headers.clone(),
                body: Vec::new(),
            };
            http1::check_request(&check).map_err(|e| format!("step '{}': {e}", s.name))?;
            let path = Template::compile(&s.path, lookup)?;
            let mut headers = Vec::new();
            for (k, v) in &s.headers {
                headers.push((k.clone(), Template::compile(v, lookup)?));
            }
            let body = Template::compile(&s.body, lookup)?;
            let captures = s
                .captures
                .iter()
                .map(|(name, path)| (known[name], dotted_to_pointer(path)))
                .collect();
            let expect = s
                .expect
                .iter()
                .map(|(p, v)| (dotted_to_pointer(p), v.clone()))
                .collect();
            if !(s.think_ms.is_finite() && (0.0..=3_600_000.0).contains(&s.think_ms)) {
                return Err(format!(
                    "step '{}': think_ms must be between 0 and 3600000 (got {})",
                    s.name, s.think_ms
                ));
            }
            if let Some(code) = s.status {
                if !(100..=599).contains(&code) {
                    return Err(format!(
                        "step '{}': status {code} is not an HTTP status",
                        s.name
                    ));
                }
            }
            steps.push(Step {
                name: s.name.clone(),
                status: s.status,
                body_contains: s
                    .body_contains
                    .iter()
                    .map(|t| t.as_bytes().to_vec())
                    .collect(),
                think: (s.think_ms > 0.0)
                    .then(|| std::time::Duration::from_secs_f64(s.think_ms / 1000.0)),
                head_request: s.method.eq_ignore_ascii_case("HEAD"),
                method: s.method.clone(),
                path,
                headers,
                body,
                user_host: s
                    .headers
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("host")),
                user_agent: s
                    .headers
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("user-agent")),
                captures,
                expect,
            });
        }
        Ok(Scenario {
            steps,
            var_names,
            constants,
        })
    }

    /// Fresh variables for virtual user `vu` of run `run_id`.
    pub fn new_vars(&self, vu: u64, run_id: &str) -> Vars {
        let mut values = vec![None; self.var_names.len()];
        values[VAR_VU] = Some(vu.to_string().into_bytes());
        values[VAR_ITER] = Some(b"0".to_vec());
        values[VAR_RUN] = Some(run_id.as_bytes().to_vec());
        for (i, v) in &self.constants {
            values[*i] = Some(v.clone());
        }
        let seed = run_id.bytes().fold(0x9E37_79B9_7F4A_7C15u64 ^ vu, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
        });
        Vars {
            values,
            rng: seed | 1,
            scratch: Vec::new(),
        }
    }

    /// Start iteration `iter`: captured values of the last one are forgotten so
    /// a stale value can never hide a failed capture.
    pub fn begin_iteration(&self, vars: &mut Vars, iter: u64) {
        let fixed = BUILTINS.len() + self.constants.len();
        for v in vars.values.iter_mut().skip(fixed) {
            *v = None;
        }
        let slot = vars.values[VAR_ITER].get_or_insert_with(Vec::new);
        slot.clear();
        slot.extend_from_slice(iter.to_string().as_bytes());
    }

    /// Serialize step `i` for this user into `out` (cleared first).
    pub fn render(
        &self,
        i: usize,
        vars: &mut Vars,
        authority: &str,
        keepalive: bool,
        body_buf: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) {
        let step = &self.steps[i];
        out.clear();
        body_buf.clear();
        out.extend_from_slice(step.method.as_bytes());
        out.push(b' ');
        step.path.render(vars, out);
        out.extend_from_slice(b" HTTP/1.1\r\n");
        if !step.user_host {
            http1::write_header(out, b"Host", authority.as_bytes());
        }
        if !step.user_agent {
            http1::write_header(out, b"User-Agent", http1::USER_AGENT.as_bytes());
        }
        if !keepalive {
            http1::write_header(out, b"Connection", b"close");
        }
        for (k, t) in &step.headers {
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b": ");
            t.render(vars, out);
            out.extend_from_slice(b"\r\n");
        }
        step.body.render(vars, body_buf);
        http1::write_body(out, &step.method, body_buf);
    }

    /// Apply step `i`'s checks and captures to its answer body.
    pub fn absorb(&self, i: usize, vars: &mut Vars, body: &[u8]) -> Result<(), String> {
        let step = &self.steps[i];
        for text in &step.body_contains {
            if !body
                .windows(text.len().max(1))
                .any(|w| w == text.as_slice())
            {
                return Err(format!(
                    "step '{}': body does not contain '{}'",
                    step.name,
                    String::from_utf8_lossy(text)
                ));
            }
        }
        if step.captures.is_empty() && step.expect.is_empty() {
            return Ok(());
        }
        let doc: Value = serde_json::from_slice(body)
            .map_err(|_| format!("step '{}': answer is not JSON", step.name))?;
        for (pointer, expected) in &step.expect {
            match doc.pointer(pointer) {
                Some(v) if value_text(v) == *expected => {}
                Some(v) => {
                    return Err(format!(
                        "step '{}': {pointer} is {}, expected {expected}",
                        step.name,
                        value_text(v)
                    ))
                }
                None => return Err(format!("step '{}': answer has no {pointer}", step.name)),
            }
        }
        for (index, pointer) in &step.captures {
            let v = doc.pointer(pointer).ok_or_else(|| {
                format!("step '{}': answer has no {pointer} to capture", step.name)
            })?;
            vars.values[*index] = Some(value_text(v).into_bytes());
        }
        Ok(())
    }

    /// Current value of a variable (for tests and diagnostics).
    pub fn value<'v>(&self, vars: &'v Vars, name: &str) -> Option<&'v [u8]> {
        let i = self.var_names.iter().position(|n| n == name)?;
        vars.values[i].as_deref()
    }
}

impl Vars {
    fn fill(&mut self, index: usize) {
        if index == VAR_RAND {
            // xorshift64*: cheap, good enough for unique-ish ids.
            let mut x = self.rng;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.rng = x;
            self.scratch.clear();
            self.scratch
                .extend_from_slice(x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_string().as_bytes());
        }
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn check_var_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    if ok {
        Ok(())
    } else {
        Err(format!(
            "bad variable name '{name}' (letters, digits and _ only)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> ScenarioSpec {
        serde_json::from_str(json).unwrap()
    }

    fn ticket_scenario() -> Scenario {
        let s = spec(
            r#"{"vars": [["plate", "A 123"]],
                "steps": [
                  {"name": "issue", "method": "POST", "path": "/ticket?vu={{vu}}&it={{iter}}",
                   "body": "{\"plate\": \"{{plate}}\"}", "headers": [["Content-Type", "application/json"]],
                   "captures": [["ticket", "info.ticket"], ["n", "/count"]],
                   "expect": [["status", "success"]]},
                  {"name": "use", "path": "/use?t={{ticket}}&p={{plate|url}}&n={{n}}"}
                ]}"#,
        );
        Scenario::compile(&s).unwrap()
    }

    #[test]
    fn renders_captures_and_builtins() {
        let sc = ticket_scenario();
        let mut vars = sc.new_vars(7, "r1");
        sc.begin_iteration(&mut vars, 3);
        let (mut body, mut out) = (Vec::new(), Vec::new());
        sc.render(0, &mut vars, "h:1", true, &mut body, &mut out);
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "POST /ticket?vu=7&it=3 HTTP/1.1\r\nHost: h:1\r\nUser-Agent: dbstand-loadgen\r\n\
             Content-Type: application/json\r\nContent-Length: 18\r\n\r\n{\"plate\": \"A 123\"}"
        );
        sc.absorb(
            0,
            &mut vars,
            br#"{"status": "success", "info": {"ticket": "T-9"}, "count": 42}"#,
        )
        .unwrap();
        assert_eq!(sc.value(&vars, "ticket"), Some(&b"T-9"[..]));
        sc.render(1, &mut vars, "h:1", false, &mut body, &mut out);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(
            text.starts_with("GET /use?t=T-9&p=A%20123&n=42 HTTP/1.1\r\n"),
            "{text}"
        );
        assert!(text.contains("Connection: close\r\n"));
        assert!(text.ends_with("\r\n\r\n"));
    }

    #[test]
    fn new_iteration_forgets_captures() {
        let sc = ticket_scenario();
        let mut vars = sc.new_vars(0, "r");
        sc.absorb(
            0,
            &mut vars,
            br#"{"status": "success", "info": {"ticket": 5}, "count": 1}"#,
        )
        .unwrap();
        assert_eq!(sc.value(&vars, "ticket"), Some(&b"5"[..]));
        sc.begin_iteration(&mut vars, 1);
        assert_eq!(sc.value(&vars, "ticket"), None);
        assert_eq!(sc.value(&vars, "plate"), Some(&b"A 123"[..]));
        assert_eq!(sc.value(&vars, "iter"), Some(&b"1"[..]));
    }

    #[test]
    fn checks_and_missing_captures_fail() {
        let sc = ticket_scenario();
        let mut vars = sc.new_vars(0, "r");
        assert!(sc
            .absorb(0, &mut vars, br#"{"status": "not_available"}"#)
            .is_err());
        assert!(sc
            .absorb(0, &mut vars, br#"{"status": "success"}"#)
            .is_err());
        assert!(sc.absorb(0, &mut vars, b"<html>").is_err());
    }

    #[test]
    fn status_body_and_think_checks() {
        let s = spec(
            r#"{"steps": [
                  {"name": "gone", "path": "/old", "status": 404},
                  {"name": "page", "path": "/p", "body_contains": ["price", "EUR"], "think_ms": 2.5},
                  {"name": "any", "path": "/a"}
                ]}"#,
        );
        let sc = Scenario::compile(&s).unwrap();
        assert!(sc.steps[0].accepts(404) && !sc.steps[0].accepts(200));
        assert!(sc.steps[0]
            .status_error(200)
            .contains("status 200, expected 404"));
        assert!(sc.steps[2].accepts(204) && !sc.steps[2].accepts(404));
        assert!(sc.steps[1].reads_body() && !sc.steps[2].reads_body());
        assert_eq!(
            sc.steps[1].think,
            Some(std::time::Duration::from_micros(2500))
        );
        assert_eq!(sc.steps[2].think, None);
        let mut vars = sc.new_vars(0, "r");
        assert!(sc.absorb(1, &mut vars, b"<p>price: 3 EUR</p>").is_ok());
        let err = sc.absorb(1, &mut vars, b"<p>price: 3</p>").unwrap_err();
        assert!(err.contains("body does not contain 'EUR'"), "{err}");
        for (json, want) in [
            (
                r#"{"steps": [{"name": "a", "path": "/", "status": 99}]}"#,
                "not an HTTP status",
            ),
            (
                r#"{"steps": [{"name": "a", "path": "/", "think_ms": -1}]}"#,
                "think_ms",
            ),
        ] {
            let err = Scenario::compile(&spec(json)).unwrap_err();
            assert!(err.contains(want), "{err}");
        }
    }

    #[test]
    fn rand_differs_each_use() {
        let s = spec(r#"{"steps": [{"name": "a", "path": "/{{rand}}/{{rand}}"}]}"#);
        let sc = Scenario::compile(&s).unwrap();
        let mut vars = sc.new_vars(1, "x");
        let (mut body, mut out) = (Vec::new(), Vec::new());
        sc.render(0, &mut vars, "h", true, &mut body, &mut out);
        let text = String::from_utf8(out).unwrap();
        let path = text.split(' ').nth(1).unwrap();
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        assert_eq!(parts.len(), 2);
        assert_ne!(parts[0], parts[1]);
    }

    #[test]
    fn compile_errors_are_specific() {
        let bad = [
            (r#"{"steps": []}"#, "at least one step"),
            (
                r#"{"steps": [{"name": "a", "path": "/{{nope}}"}]}"#,
                "unknown variable 'nope'",
            ),
            (
                r#"{"steps": [{"name": "a", "path": "/{{t}}"}, {"name": "b", "path": "/", "captures": [["t", "x"]]}]}"#,
                "before any earlier step captures it",
            ),
            (
                r#"{"steps": [{"name": "a", "path": "x"}]}"#,
                "must start with '/'",
            ),
            (r#"{"steps": [{"name": "a", "path": "/{{vu"}]}"#, "unclosed"),
            (
                r#"{"steps": [{"name": "a", "path": "/{{vu|b64}}"}]}"#,
                "unknown filter",
            ),
            (
                r#"{"steps": [{"name": "a", "path": "/", "captures": [["vu", "x"]]}]}"#,
                "already defined",
            ),
            (
                r#"{"steps": [{"name": "a", "path": "/", "method": "G T"}]}"#,
                "bad HTTP method",
            ),
        ];
        for (json, want) in bad {
            let err = Scenario::compile(&spec(json)).unwrap_err();
            assert!(err.contains(want), "{json}: {err}");
        }
    }

    #[test]
    fn dotted_paths_become_pointers() {
        assert_eq!(dotted_to_pointer("a.b.0"), "/a/b/0");
        assert_eq!(dotted_to_pointer("/a/b"), "/a/b");
        assert_eq!(dotted_to_pointer("a/b.c~d"), "/a~1b/c~0d");
    }
}
