//! The detector against Apache Otava's published tests (tests/analysis_test.py,
//! tests/change_point_divisive_test.py, tests/tigerbeetle_test.py: the same inputs give the
//! same change points).

use super::*;

/// Otava's tests/change_point_divisive_test.py SEQUENCE.
const SEQUENCE: [f64; 14] = [
    0.3, 2.4, 1.5, -0.9, -0.5, 99.7, 98.3, 99.1, 149.0, 149.7, 149.5, 149.1, 148.8, 150.0,
];

/// Otava's tests/analysis_test.py test_single_series.
const SINGLE: [f64; 20] = [
    1.02, 0.95, 0.99, 1.00, 1.12, 1.00, 1.01, 0.98, 1.01, 0.96, 0.50, 0.51, 0.48, 0.48, 0.55, 0.50,
    0.49, 0.51, 0.50, 0.49,
];

fn tigerbeetle() -> Vec<f64> {
    include_str!("tigerbeetle.txt")
        .lines()
        .map(|l| l.trim().parse().expect("a number"))
        .collect()
}

fn strong(points: &[ChangePoint]) -> Vec<usize> {
    points
        .iter()
        .filter(|p| p.strong)
        .map(|p| p.index)
        .collect()
}

fn params(window: usize, max_pvalue: f64, min_magnitude: f64) -> Params {
    Params {
        max_pvalue,
        window,
        min_magnitude,
        test: Test::TTest,
    }
}

#[test]
fn t_test_matches_otava_significance_tester() {
    let same = [1.00, 1.02, 1.05, 0.95, 0.98, 1.00, 1.02, 1.05, 0.95, 0.98];
    let p = Segments::of(&same[..5], &same[5..]).t_test();
    assert!(p > 0.99 && p <= 1.0, "{p}");
    let shifted = [1.00, 1.02, 1.05, 0.95, 0.98, 0.80, 0.82, 0.85, 0.79, 0.77];
    let p = Segments::of(&shifted[..5], &shifted[5..]).t_test();
    assert!(p > 0.0 && p < 0.001, "{p}");
}

#[test]
fn detector_with_t_test_finds_otavas_sequence_points() {
    let cps = divisive::detect(&SEQUENCE, |c, cps| {
        let (s, e) = divisive::intervals(cps, SEQUENCE.len())
            .into_iter()
            .find(|&(s, e)| s < c.index && c.index < e)
            .unwrap();
        Segments::of(&SEQUENCE[s..c.index], &SEQUENCE[c.index..e]).t_test() <= 0.01
    });
    assert_eq!(cps, vec![5, 8]);
}

#[test]
fn windowed_detection_finds_otavas_single_series_point() {
    assert_eq!(strong(&detect(&SINGLE, &params(10, 0.0001, 0.0))), vec![10]);
}

#[test]
fn permutation_test_finds_the_original_algorithms_points() {
    let p = Params {
        test: Test::Permutation(999),
        window: 1000,
        ..params(0, 0.001, 0.0)
    };
    // A clean 10/10 split: its permutation p-value is 1/1000 at 999 permutations.
    assert_eq!(strong(&detect(&SINGLE, &p)), vec![10]);
    let p = Params {
        max_pvalue: 0.05,
        ..p
    };
    assert_eq!(strong(&detect(&SEQUENCE, &p)), vec![5, 8]);
    // No change: nothing at any sensible level.
    let flat = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02, 0.98, 1.01, 0.99];
    assert!(strong(&detect(&flat, &p)).is_empty());
}

#[test]
fn tigerbeetle_gives_otavas_published_points() {
    let z = tigerbeetle();
    assert_eq!(z.len(), 365);
    let cases: &[(f64, f64, &[usize])] = &[
        (0.01, 0.05, &[15, 71]),
        (0.05, 0.05, &[15, 71]),
        (0.1, 0.05, &[10, 11, 15, 71, 363]),
        (0.2, 0.05, &[10, 11, 15, 71]),
        (
            0.01,
            0.0,
            &[
                15, 26, 61, 71, 95, 117, 131, 142, 148, 165, 169, 192, 212, 260,
            ],
        ),
        (
            0.001,
            0.0,
            &[15, 61, 71, 95, 117, 131, 142, 148, 192, 212, 260],
        ),
        (0.0001, 0.0, &[71, 95, 117, 131, 142, 148, 192, 212]),
        (0.00001, 0.0, &[71, 95, 131, 192, 212]),
    ];
    for &(p, magnitude, expected) in cases {
        let got = strong(&detect(&z, &params(30, p, magnitude)));
        assert_eq!(got, expected, "p {p} magnitude {magnitude}");
    }
}

#[test]
fn incremental_detection_equals_the_full_one() {
    let z = tigerbeetle();
    let p = params(30, 0.001, 0.0);
    let (_, mut cache, reuse) = incremental::detect(&z[..200], &p, None);
    assert_eq!(reuse, incremental::Reuse::Full);
    for len in 201..=z.len() {
        let (points, next, reuse) = incremental::detect(&z[..len], &p, Some(&cache));
        assert!(
            matches!(reuse, incremental::Reuse::From(s) if s > 0),
            "{len}: {reuse:?}"
        );
        assert_eq!(
            strong(&points),
            strong(&detect(&z[..len], &p)),
            "at {len} runs"
        );
        cache = next;
    }
    let (_, _, reuse) = incremental::detect(&z, &p, Some(&cache));
    assert_eq!(reuse, incremental::Reuse::Same);
    // Other values before: not reused.
    let mut other = z.clone();
    other[3] += 1.0;
    let (_, _, reuse) = incremental::detect(&other, &p, Some(&cache));
    assert_eq!(reuse, incremental::Reuse::Full);
}

/// 40 series of 1,000 noisy runs with shifts: how long a full detection and adding one run
/// take (`cargo test --release --lib changepoint::tests::timing -- --nocapture`). Reports
/// the time; asserts only that the incremental result is the full one's.
#[test]
fn timing_of_1000_runs_by_40_series() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(29);
    let series: Vec<Vec<f64>> = (0..40)
        .map(|s| {
            (0..1001)
                .map(|i| {
                    let level = 1000.0 * (1.0 + 0.1 * ((i * (s + 1) / 300) % 3) as f64);
                    level * (1.0 + 0.02 * (rng.random::<f64>() - 0.5))
                })
                .collect()
        })
        .collect();
    let p = Params::default();
    let t = std::time::Instant::now();
    let caches: Vec<_> = series
        .iter()
        .map(|z| incremental::detect(&z[..1000], &p, None).1)
        .collect();
    let full = t.elapsed();
    let t = std::time::Instant::now();
    let grown: Vec<_> = series
        .iter()
        .zip(&caches)
        .map(|(z, c)| incremental::detect(z, &p, Some(c)).0)
        .collect();
    let added = t.elapsed();
    eprintln!("1000 runs x 40 series: full {full:?}, one run added {added:?}");
    for (z, g) in series.iter().zip(&grown) {
        assert_eq!(strong(g), strong(&detect(z, &p)));
    }
}

/// Runs of N(1, cv) then N(1 + shift, cv): how many runs after a shift the detector needs
/// (default parameters, 20 runs before) to find it within 2 runs of where it is in 90 % of
/// 200 trials; and how often 30 A/A runs give a change point (any, and one the gate would
/// call a regression: beyond twice the spread, in one direction). Prints the table of docs/history.md:
/// `cargo test --release --lib changepoint::tests::power -- --ignored --nocapture`.
#[test]
#[ignore]
fn power() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(2014);
    let mut normal = move || {
        let (u, v): (f64, f64) = (rng.random(), rng.random());
        (-2.0 * (1.0 - u).ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let p = Params::default();
    let trials = 200;
    for cv in [0.01, 0.02, 0.05, 0.10] {
        let (mut aa, mut beyond) = (0, 0);
        for _ in 0..trials {
            let z: Vec<f64> = (0..30).map(|_| 1.0 + cv * normal()).collect();
            let found = detect(&z, &p);
            aa += usize::from(found.iter().any(|c| c.strong));
            // As the gate counts them: beyond twice the larger spread, one direction.
            beyond += usize::from(found.iter().any(|c| {
                c.strong
                    && c.mean_after < c.mean_before
                    && c.mean_before - c.mean_after > 2.0 * c.std_before.max(c.std_after)
            }));
        }
        let pct = |n: usize| n as f64 * 100.0 / trials as f64;
        let mut row = format!(
            "cv {:>4.0}%: A/A(30) any {:>4.1}% gate {:>4.1}% |",
            cv * 100.0,
            pct(aa),
            pct(beyond)
        );
        for shift in [0.02, 0.05, 0.10, 0.20, 0.50] {
            let needed = (1..=30).find(|&k| {
                let found = (0..trials)
                    .filter(|_| {
                        let z: Vec<f64> = (0..20 + k)
                            .map(|i| {
                                (1.0 + if i >= 20 { shift } else { 0.0 }) * (1.0 + cv * normal())
                            })
                            .collect();
                        detect(&z, &p)
                            .iter()
                            .any(|c| c.strong && c.index.abs_diff(20) <= 2 && c.change() > 0.0)
                    })
                    .count();
                found * 10 >= trials * 9
            });
            row.push_str(&format!(
                " {:>3.0}%: {:>4}",
                shift * 100.0,
                needed.map_or(">30".to_string(), |k| k.to_string())
            ));
        }
        eprintln!("{row}");
    }
}
