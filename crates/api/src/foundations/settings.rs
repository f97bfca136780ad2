//! How a setting's text becomes its value: the parsers of the setting groups declared here
//! (`secondary::SecondarySettings`, the groups of `state::ApiConfig`) and of the binary's other settings
//! (`platformd::config::Config`), which flattens these groups into its command line.
use std::ffi::OsStr;

use clap::builder::TypedValueParser;
use clap::{Arg, Command, ValueEnum};

/// Parses a setting's text with `parse`, its errors naming the environment variable as before
/// clap (`PLATFORM_MAX_BODY_BYTES: not a number: "x"`) and never echoing the value the way clap's
/// own message would (a mistyped secret key stays out of the terminal).
#[derive(Clone)]
pub struct Setting<T>(fn(&str) -> Result<T, String>);

pub fn setting<T>(parse: fn(&str) -> Result<T, String>) -> Setting<T> {
    Setting(parse)
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Setting<T> {
    type Value = T;

    fn parse_ref(&self, _cmd: &Command, arg: Option<&Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let name = arg.and_then(Arg::get_env).map_or_else(String::new, |e| e.to_string_lossy().into_owned());
        let fail = |e: String| clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{name}: {e}\n"));
        (self.0)(value.to_str().ok_or_else(|| fail("not UTF-8".into()))?).map_err(fail)
    }
}

pub fn on_off(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err(format!("expected on/off, got {v:?}")),
    }
}

pub fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.trim().parse().map_err(|_| format!("not a number: {v:?}"))
}

/// Whole seconds.
pub fn seconds(v: &str) -> Result<std::time::Duration, String> {
    number(v).map(std::time::Duration::from_secs)
}

/// Whole milliseconds.
pub fn millis(v: &str) -> Result<std::time::Duration, String> {
    number(v).map(std::time::Duration::from_millis)
}

/// A URL whose password is hidden in `Debug` (and so in the logs).
#[derive(Clone, PartialEq)]
pub struct Url(pub String);

impl std::fmt::Debug for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = &self.0;
        match (url.find("://"), url.rfind('@')) {
            (Some(s), Some(at)) if at > s => match url[s + 3..at].split_once(':') {
                Some((user, _)) => write!(f, "{:?}", format!("{}{}:<redacted>{}", &url[..s + 3], user, &url[at..])),
                None => write!(f, "{url:?}"),
            },
            _ => write!(f, "{url:?}"),
        }
    }
}

/// One of a [`ValueEnum`]'s names, exactly (`expected system or manual, got "fast"`).
pub fn choice<T: ValueEnum>(v: &str) -> Result<T, String> {
    T::from_str(v, false).map_err(|_| {
        let names: Vec<String> =
            T::value_variants().iter().filter_map(ValueEnum::to_possible_value).map(|p| p.get_name().to_string()).collect();
        format!("expected {}, got {v:?}", names.join(" or "))
    })
}
