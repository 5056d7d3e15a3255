//! Flags that do not apply to the target were ignored without a word: `--server-pid`,
//! `--data-dir`, `--client-threads` and the like given with an embedded DBMS (SQLite), whose
//! figures are ibench's own and whose clients each have a thread. Each is refused now, in one
//! line naming the flag, before anything is created.

use crate::common::Bench;

#[test]
fn server_flags_given_for_an_embedded_dbms_are_refused_naming_the_flag() {
    let bench = Bench::new();
    let cases: &[&[&str]] = &[
        &["--server-pid", "1"],
        &["--server-pid-file", "/etc/hostname"],
        &["--data-dir", "/tmp"],
        &["--allow-server-changes"],
        &["--client-threads", "2"],
        &["--client-io", "epoll"],
    ];
    for command in ["run", "micro", "tpcc"] {
        for flags in cases {
            let out = bench.out();
            let mut args = vec![command, "--out", crate::common::path_str(&out)];
            args.extend_from_slice(flags);
            let o = bench.run_raw(&args, &[]);
            let all = o.describe();
            assert_eq!(o.code, Some(2), "{command} {flags:?}: {all}");
            let errors: Vec<_> = o
                .stderr
                .lines()
                .filter(|l| l.starts_with("error:"))
                .collect();
            assert_eq!(errors.len(), 1, "{command} {flags:?}: {all}");
            assert!(
                errors[0].contains(flags[0]) && errors[0].contains("sqlite"),
                "{command} {flags:?}: the error names the flag and the DBMS: {all}"
            );
            assert!(!out.exists(), "{command} {flags:?}: nothing created: {all}");
        }
    }
}
