//! SVD reset values (issue 40, item 3): with `--svd FILE` and
//! `--peripherals ignore`, a register no model answers reads its reset
//! value as CMSIS-SVD defines it (the register's `resetValue`, else its
//! peripheral's, else the device's; a `derivedFrom` peripheral's own over
//! its base's), 0 where the SVD gives none (counted in the report); a
//! byte or halfword read returns the bytes of the value it covers; writes
//! are dropped. A loop polling a register that never changes is named at
//! the cycle limit with the field it tests. A reset value that is not a
//! number, or does not fit its register, is refused naming the file, the
//! line and the element.
//!
//! The `svdreset` example prints what each read returned; the expected
//! values below are read off the SVD text by hand.

use e2e_tests::{guest, scratch, sim_host_bin};
use std::path::Path;
use std::process::{Command, Output};

/// The test's device: `device_level` is the device's own properties
/// after `<size>` (a `<resetValue>`, or nothing).
fn device_svd(device_level: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<device schemaVersion="1.3">
  <name>RESETS</name>
  <version>1.0</version>
  <description>reset values at every level</description>
  <addressUnitBits>8</addressUnitBits>
  <width>32</width>
  <size>32</size>
  {device_level}
  <peripherals>
    <peripheral>
      <name>GEN</name>
      <baseAddress>0x40100000</baseAddress>
      <resetValue>0x0000AB00</resetValue>
      <addressBlock><offset>0</offset><size>0x100</size><usage>registers</usage></addressBlock>
      <registers>
        <register>
          <name>CR</name><addressOffset>0x0</addressOffset><resetValue>0x00000083</resetValue>
          <fields>
            <field><name>HSION</name><bitOffset>0</bitOffset><bitWidth>1</bitWidth></field>
            <field><name>HSIRDY</name><bitOffset>1</bitOffset><bitWidth>1</bitWidth></field>
            <field><name>HSITRIM</name><bitOffset>3</bitOffset><bitWidth>5</bitWidth></field>
            <field><name>HSERDY</name><bitOffset>17</bitOffset><bitWidth>1</bitWidth></field>
            <field><name>PLLRDY</name><bitOffset>25</bitOffset><bitWidth>1</bitWidth></field>
          </fields>
        </register>
        <register><name>CFG</name><addressOffset>0x4</addressOffset></register>
        <register>
          <name>HALF</name><addressOffset>0x8</addressOffset><size>16</size>
          <resetValue>0xBEEF</resetValue>
        </register>
        <register>
          <name>BYTES</name><addressOffset>0xC</addressOffset><resetValue>0x44332211</resetValue>
        </register>
      </registers>
    </peripheral>
    <peripheral derivedFrom="GEN">
      <name>GEN2</name>
      <baseAddress>0x40101000</baseAddress>
    </peripheral>
    <peripheral derivedFrom="GEN">
      <name>GEN3</name>
      <baseAddress>0x40102000</baseAddress>
      <resetValue>0x77</resetValue>
    </peripheral>
    <peripheral>
      <name>DEV</name>
      <baseAddress>0x40103000</baseAddress>
      <addressBlock><offset>0</offset><size>0x100</size><usage>registers</usage></addressBlock>
      <registers>
        <register><name>PLAIN</name><addressOffset>0x0</addressOffset></register>
      </registers>
    </peripheral>
  </peripherals>
</device>
"#
    )
}

/// The reads the guest makes, and the value each must return by the SVD
/// above (`None`: the device-level value, if any).
const READS: [(&str, Option<u64>); 9] = [
    // GEN.CR's own resetValue
    ("w:0x40100000", Some(0x83)),
    // GEN.CFG has none: GEN's peripheral-level 0xAB00
    ("w:0x40100004", Some(0xab00)),
    // GEN.HALF, 16 bits: its own 0xBEEF
    ("h:0x40100008", Some(0xbeef)),
    // GEN.BYTES is 0x44332211: byte 1 and the upper half
    ("b:0x4010000d", Some(0x22)),
    ("h:0x4010000e", Some(0x4433)),
    // GEN2 derives everything from GEN
    ("w:0x40101000", Some(0x83)),
    ("w:0x40101004", Some(0xab00)),
    // GEN3's own peripheral-level 0x77 overrides GEN's for CFG
    ("w:0x40102004", Some(0x77)),
    // DEV.PLAIN: nothing but the device level
    ("w:0x40103000", None),
];

fn run(target: &str, svd: &Path, json: &Path, args: &[&str]) -> Output {
    Command::new(sim_host_bin())
        .args(["run", "--target", target, "--max-cycles", "3000000"])
        .args(["--peripherals", "ignore", "--svd"])
        .arg(svd)
        .arg("--report-json")
        .arg(json)
        .arg(guest(target, "svdreset"))
        .arg("--")
        .args(args)
        .output()
        .expect("sim-host starts")
}

fn text(out: &Output) -> (Option<i32>, String, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The values the guest printed, one per read.
fn printed(stdout: &str) -> Vec<u64> {
    stdout
        .lines()
        .map(|l| {
            let value = l.rsplit(' ').next().unwrap();
            u64::from_str_radix(value.trim_start_matches("0x"), 16).unwrap()
        })
        .collect()
}

/// The report's JSON row of peripheral `name`.
fn json_row(json: &Path, name: &str) -> serde_json::Value {
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    let rows = report["peripherals"].as_array().unwrap().clone();
    rows.into_iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {name}: {report}"))
}

#[test]
fn registers_read_their_svd_reset_values_at_every_level() {
    let args: Vec<&str> = READS.iter().map(|(a, _)| *a).collect();
    for target in ["cortex-m0", "cortex-m4", "rv32imac"] {
        let dir = scratch(&format!("svd-reset-{target}"));
        let json = dir.join("report.json");
        // with a device-level resetValue: DEV.PLAIN reads it
        let svd = dir.join("device.svd");
        std::fs::write(&svd, device_svd("<resetValue>0xD0D0D0D0</resetValue>")).unwrap();
        let (code, out, err) = text(&run(target, &svd, &json, &args));
        assert_eq!(code, Some(0), "{target}: {err}");
        let expected: Vec<u64> = READS
            .iter()
            .map(|(_, v)| v.unwrap_or(0xd0d0_d0d0))
            .collect();
        assert_eq!(printed(&out), expected, "{target}: {out}");
        let dev = json_row(&json, "DEV");
        assert_eq!(dev["reads_without_reset_value"], 0, "{dev}");
        // without: DEV.PLAIN has no reset value anywhere and reads 0, and
        // the report counts that read
        std::fs::write(&svd, device_svd("")).unwrap();
        let (code, out, err) = text(&run(target, &svd, &json, &args));
        assert_eq!(code, Some(0), "{target}: {err}");
        let expected: Vec<u64> = READS.iter().map(|(_, v)| v.unwrap_or(0)).collect();
        assert_eq!(printed(&out), expected, "{target}: {out}");
        let dev = json_row(&json, "DEV");
        let expected = serde_json::json!({
            "name": "DEV", "reads": 1, "writes": 0, "reads_without_reset_value": 1
        });
        assert_eq!(dev, expected);
        let gen = json_row(&json, "GEN");
        assert_eq!(gen["reads"], 5, "{gen}");
        assert_eq!(gen["reads_without_reset_value"], 0, "{gen}");
        let row = err
            .lines()
            .find(|l| l.trim_start().starts_with("DEV "))
            .unwrap_or_else(|| panic!("{err}"));
        let numbers: Vec<&str> = row.split_whitespace().skip(1).collect();
        assert_eq!(
            numbers,
            ["1", "reads", "0", "writes", "1", "without", "a", "reset", "value"],
            "{row}"
        );
    }
}

/// The svdreset example's `wait17` waits for GEN.CR bit 17 with the mask
/// a constant in the code (GCC: `lsls #14; bpl` on the M4, `tst` with the
/// mask set before the loop's block on the M0, `slli`/`bgez` or `andi`
/// on RISC-V): the warning names the register, the value it read (GEN.CR
/// resets to 0x83) and the field.
#[test]
fn a_poll_names_the_register_and_the_field_it_waits_on() {
    for target in ["cortex-m0", "cortex-m4", "rv32imac"] {
        let dir = scratch(&format!("svd-poll-{target}"));
        let svd = dir.join("device.svd");
        std::fs::write(&svd, device_svd("")).unwrap();
        let json = dir.join("report.json");
        let (code, _, err) = text(&run(target, &svd, &json, &["wait17"]));
        assert_eq!(code, Some(122), "{target}: {err}");
        assert!(
            err.contains("polling GEN.CR (0x40100000)"),
            "{target}: {err}"
        );
        let value = "0x83 each time (its SVD reset value: --peripherals ignore drops writes)";
        assert!(err.contains(value), "{err}");
        assert!(
            err.contains("the loop tests HSERDY (bit 17):"),
            "{target}: {err}"
        );
    }
}

/// The svdreset example's poll takes its mask from the command line (a
/// register the loop's block does not set): it is read as the loop runs.
/// GEN.CR resets to 0x83; the loop waits for HSERDY (bit 17) or, with two
/// bits, for HSERDY or PLLRDY. A mask the SVD has no field for is named
/// by its bit.
#[test]
fn a_poll_on_a_mask_in_a_register_names_each_field() {
    let cases = [
        ("0x20000", "the loop tests HSERDY (bit 17):"),
        (
            "0x2020000",
            "the loop tests HSERDY (bit 17), PLLRDY (bit 25):",
        ),
        ("0x400", "the loop tests bit 10:"),
    ];
    for target in ["cortex-m4", "rv32imac"] {
        let dir = scratch(&format!("svd-poll-mask-{target}"));
        let svd = dir.join("device.svd");
        std::fs::write(&svd, device_svd("")).unwrap();
        let json = dir.join("report.json");
        for (mask, expected) in cases {
            let arg = format!("poll:0x40100000:{mask}");
            let (code, _, err) = text(&run(target, &svd, &json, &[&arg]));
            assert_eq!(code, Some(122), "{target}: {err}");
            assert!(err.contains("polling GEN.CR (0x40100000)"), "{err}");
            assert!(err.contains("0x83 each time (its SVD reset value"), "{err}");
            assert!(err.contains(expected), "{target} {mask}: {err}");
        }
        // a bit the reset value has set: the loop ends at once
        let (code, out, err) = text(&run(target, &svd, &json, &["poll:0x40100000:0x2"]));
        assert_eq!((code, out.as_str()), (Some(0), "ready\n"), "{err}");
    }
}

/// A hostile or broken reset value: the SVD's text and what the refusal
/// must say (the file's name is checked for every case).
type Shape = (&'static str, String, Vec<&'static str>);

fn hostile_shapes() -> Vec<Shape> {
    let base = device_svd("");
    let with_device = |level: &str| device_svd(level);
    vec![
        (
            "register-not-a-number",
            base.replace(
                "<resetValue>0x00000083</resetValue>",
                "<resetValue>0x8z</resetValue>",
            ),
            vec!["register `CR`", "resetValue at 18:", "invalid digit"],
        ),
        (
            "device-not-a-number",
            with_device("<resetValue>zero</resetValue>"),
            vec!["device `RESETS`", "resetValue at 9:"],
        ),
        (
            "mask-not-a-number",
            with_device("<resetMask>-1</resetMask>"),
            vec!["device `RESETS`", "resetMask at 9:"],
        ),
        (
            // its own size
            "wider-than-own-size",
            base.replace(
                "<resetValue>0xBEEF</resetValue>",
                "<resetValue>0x1BEEF</resetValue>",
            ),
            vec![
                "line 30",
                "<resetValue> 0x1beef",
                "`HALF` (line 28)",
                "16 bits",
            ],
        ),
        (
            // the device's value in a 16-bit register that has none
            "device-value-wider-than-register",
            with_device("<resetValue>0x10000</resetValue>").replace(
                "<name>PLAIN</name><addressOffset>0x0</addressOffset>",
                "<name>PLAIN</name><addressOffset>0x0</addressOffset><size>16</size>",
            ),
            vec![
                "line 9",
                "<resetValue> 0x10000",
                "`PLAIN` (line 51) of peripheral `DEV`",
                "16 bits (the <size> of line 51)",
            ],
        ),
        (
            // the peripheral's value and its 8-bit size, in CFG
            "wider-than-inherited-size",
            base.replace(
                "<resetValue>0x0000AB00</resetValue>",
                "<resetValue>0x0000AB00</resetValue><size>8</size>",
            ),
            vec![
                "line 14",
                "<resetValue> 0xab00",
                "`CFG` (line 27)",
                "8 bits (the <size> of line 14)",
            ],
        ),
        (
            // inherited through derivedFrom: no line to name, the register
            "derived-wider-than-size",
            base.replace(
                "<baseAddress>0x40101000</baseAddress>",
                "<baseAddress>0x40101000</baseAddress><size>4</size>",
            ),
            vec!["register `GEN2.CR`", "resetValue 0x83", "4 bits"],
        ),
    ]
}

#[test]
fn bad_reset_values_are_refused_naming_file_line_and_element() {
    let dir = scratch("svd-reset-hostile");
    for (name, text, expected) in hostile_shapes() {
        let path = dir.join(format!("{name}.svd"));
        std::fs::write(&path, &text).unwrap();
        let e = sim_host::model::svd::load(&path)
            .err()
            .unwrap_or_else(|| panic!("{name}: loaded, not refused"))
            .to_string();
        eprintln!("{name}: {e}");
        assert!(e.contains(&format!("{name}.svd")), "{name}: {e}");
        for part in expected {
            assert!(e.contains(part), "{name}: `{part}` not in: {e}");
        }
    }
    // and the run stops with it before the guest starts
    let path = dir.join("register-not-a-number.svd");
    let out = Command::new(sim_host_bin())
        .args([
            "run",
            "--target",
            "cortex-m4",
            "--peripherals",
            "ignore",
            "--svd",
        ])
        .arg(&path)
        .arg(guest("cortex-m4", "svdreset"))
        .output()
        .unwrap();
    let (code, stdout, err) = text(&out);
    assert_ne!(code, Some(0), "{err}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(err.contains("register-not-a-number.svd"), "{err}");
}
