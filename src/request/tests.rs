//! Assembling each workload's spec from layers (`layers.rs`), apart from it: the specs
//! implement its trait, so its own tests would import them back.

use super::{InsertBenchmarkSpec, MicroSpec, TpccSpec, assemble};
use serde_json::json;

fn flag(field: &str) -> String {
    format!("--{}", field.replace('_', "-"))
}

#[test]
fn layers_override_the_defaults_in_order_and_scale_applies_last() {
    let layers = [
        json!({"l1_rows": 800, "clients": 3}),
        json!({"clients": null}),
    ];
    let spec: InsertBenchmarkSpec = assemble(&layers, 0.5).unwrap();
    assert_eq!(spec.clients, 3);
    assert_eq!(spec.l1_rows, 400);
    // l2_rows unset: a quarter of l1_rows, then scaled.
    assert_eq!(spec.l2_rows, 100);
    let micro: MicroSpec = assemble(&[json!({"seconds": 4})], 1.0).unwrap();
    assert_eq!(micro.seconds, 4);
    assert_eq!(micro.tables, MicroSpec::default().tables);
    let tpcc: TpccSpec = assemble(&[json!({"seconds": 4})], 2.0).unwrap();
    assert_eq!(tpcc.seconds, 8);
}

/// A value of the wrong type used to give the defaults of every field, silently (no
/// command line or experiment file reaches this: their values are typed before, and the
/// one an experiment can mistype, a list of clients for the Insert Benchmark, is refused
/// before); now it is an error naming the field.
#[test]
fn a_value_that_does_not_fit_its_field_is_an_error_naming_it() {
    let layers = [json!({"l0_rows": 10, "clients": [1, 2]})];
    let e = assemble::<InsertBenchmarkSpec>(&layers, 1.0).unwrap_err();
    assert_eq!(e.field, Some(("clients".to_string(), json!([1, 2]))));
    assert_eq!(
        e.message(flag),
        "--clients [1,2] is not a valid value: invalid type: sequence, expected usize"
    );
    let e = assemble::<MicroSpec>(&[json!({"seconds": -1})], 1.0).unwrap_err();
    assert!(
        e.message(flag)
            .starts_with("--seconds -1 is not a valid value: ")
    );
    let e = assemble::<TpccSpec>(&[json!({"mix": "fast"})], 1.0).unwrap_err();
    assert!(
        e.message(flag)
            .starts_with("--mix \"fast\" is not a valid value: ")
    );
    // TPC-C's spec takes no field it does not know.
    let e = assemble::<TpccSpec>(&[json!({"benchmarks": ["scan"]})], 1.0).unwrap_err();
    assert_eq!(e.field, Some(("benchmarks".to_string(), json!(["scan"]))));
    assert!(
        e.message(flag).contains("unknown field `benchmarks`"),
        "{e:?}"
    );
}
