//! `afhttp cdp <Method>`: one raw CDP method, to the browser target or a tab.

use std::io::Read;

use clap::Args;
use serde_json::{json, Value};

use super::driver::DriverArgs;
use crate::envelope::Event;
use crate::error::AfError;
use crate::sdk::tab_id::TabId;

/// Arguments of `afhttp cdp`.
#[derive(Debug, Args)]
pub struct CdpArgs {
    /// CDP method, e.g. `Runtime.evaluate`.
    #[arg(value_name = "METHOD")]
    pub method: String,
    /// Target tab id (default: the browser target).
    #[arg(long, value_name = "ID")]
    pub tab: Option<String>,
    /// Parameters: a JSON object, @file, or @- for stdin.
    #[arg(long, value_name = "JSON|@FILE|@-")]
    pub params: Option<String>,
    #[command(flatten)]
    driver: DriverArgs,
}

pub use crate::sdk::builder::validate_cdp_method as validate_method;

/// Read `--params`.
pub fn read_params(raw: Option<&str>) -> Result<Value, AfError> {
    let text = match raw {
        None => return Ok(json!({})),
        Some("@-") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| AfError::io("read --params from stdin", &e))?;
            s
        }
        Some(r) => match r.strip_prefix('@') {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| AfError::invalid(format!("--params @{path}: {e}")))?,
            None => r.to_string(),
        },
    };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| AfError::invalid(format!("--params is not JSON: {e}")))?;
    if !v.is_object() {
        return Err(AfError::invalid("--params must be a JSON object"));
    }
    Ok(v)
}

/// Run `afhttp cdp`.
pub fn run(args: CdpArgs) -> Event {
    // Bad input is refused before any host is contacted.
    let checked = validate_method(&args.method)
        .and_then(|()| args.tab.as_deref().map(TabId::parse).transpose());
    if let Err(e) = checked {
        return super::error_event(e, None);
    }
    let params = match read_params(args.params.as_deref()) {
        Ok(p) => p,
        Err(e) => return super::error_event(e, None),
    };
    let method = args.method.clone();
    let tab = args.tab.clone();
    super::run_client(&args.driver, |client| async move {
        let mut call = client.cdp(&method).params(params);
        if let Some(tab) = &tab {
            call = call.tab(tab);
        }
        let result = call.send().await?;
        let mut body = json!({"method": method, "result": result});
        if let Some(t) = tab {
            body["tab_id"] = json!(t);
        }
        Ok(Event::result("cdp", body, None))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_and_params() {
        assert!(validate_method("Runtime.evaluate").is_ok());
        for bad in [
            "",
            "Runtime",
            "Runtime.",
            ".x",
            "A.b.c",
            "Run time.x",
            "R.e;rm",
        ] {
            assert!(validate_method(bad).is_err(), "{bad}");
        }
        assert_eq!(read_params(Some(r#"{"a":1}"#)).unwrap()["a"], 1);
        assert!(read_params(Some("[1]")).is_err());
        assert!(read_params(Some("{")).is_err());
        assert!(read_params(Some("@/missing/file")).is_err());
    }
}
