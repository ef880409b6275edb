//! The C boundary catches every panic (none may unwind into the program): what it says
//! is the panic's message.

use std::any::Any;

/// The message a panic was raised with: `panic!("...")` carries a `&str`, a formatted
/// one a `String`; anything else (`panic_any`) says only that it panicked.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_of_str_string_and_other_payloads() {
        let caught = |f: fn()| std::panic::catch_unwind(f).unwrap_err();
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        assert_eq!(panic_message(&*caught(|| panic!("plain"))), "plain");
        assert_eq!(
            panic_message(&*caught(|| panic!("formatted {}", 7))),
            "formatted 7"
        );
        assert_eq!(
            panic_message(&*caught(|| std::panic::panic_any(3u8))),
            "unknown panic"
        );
        std::panic::set_hook(hook);
    }
}
