//! The lookup of the next definitions: libc's function is found and cached,
//! and a function no library defines gives NULL, remembered, which the
//! hooks turn into a failed call (ENOSYS), never a call through NULL.

use crate::common::{Run, library, probe};

#[test]
fn a_missing_next_definition_fails_the_call_instead_of_crashing() {
    let program = probe("lookup_missing", &["-ldl"]);
    let outcome = Run::new(&program).arg(library()).run().success();
    assert_eq!(
        outcome.stdout(),
        "missing: null null, remembered: yes\nwrite: libc's, cached: yes\nfallback: -1 ENOSYS\n"
    );
}
