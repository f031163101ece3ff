//! Verdicts that cannot be faked: a suite that goes red for a reason other
//! than the removed control is never "killed".

mod common;
use common::*;

/// A suite that crashes with `SIG` when m.CRASH is true, else passes.
const CRASHING_RUN_PY: &str = r#"import os, signal, sys
import m
if m.CRASH:
    print("about to crash", flush=True)
    os.kill(os.getpid(), getattr(signal, m.SIG))
sys.exit(0)
"#;

fn crash_spec(command: &str) -> String {
    format!(
        "version: 1\ntest:\n  command: {command}\n  preset: generic\n  timeout: 60s\nmutations:\n  - id: crash\n    control: \"the crash guard\"\n    file: m.py\n    find: 'CRASH = False'\n    replace: 'CRASH = True'\n    canary: false\n"
    )
}

#[test]
fn a_crash_is_wrong_reason_as_a_shell_string_and_as_argv() {
    for sig in ["SIGKILL", "SIGSEGV"] {
        // `cd . &&` keeps the shell as the suite's parent, so it reports the
        // death as 128+N (137, 139); the argv form dies of the signal itself.
        for command in ["\"cd . && python3 run.py\"", "[python3, run.py]"] {
            let fx = Fixture::git(&[
                ("m.py", &format!("CRASH = False\nSIG = {sig:?}\n")),
                ("run.py", CRASHING_RUN_PY),
                ("unguard.yaml", &crash_spec(command)),
            ]);
            let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
            let what = format!("{sig} under {command}");
            assert_eq!(
                fx.verdicts("out")["crash"],
                "wrong-reason",
                "{what}: {}",
                ctx(code, &out, &err)
            );
            let detail = fx.outcomes("out")["mutants"][0]["detail"]
                .as_str()
                .unwrap()
                .to_string();
            let n = if sig == "SIGKILL" { 9 } else { 11 };
            assert!(detail.contains(&format!("signal {n}")), "{what}: {detail}");
            assert!(
                detail.contains("a crash, not a failing test"),
                "{what}: {detail}"
            );
            assert_eq!(code, 2, "{what}: {}", ctx(code, &out, &err));
        }
    }
}
