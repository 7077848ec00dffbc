use super::*;

/// The RP2040's: 16 KiB, 2 ways, 8-byte lines (1024 sets), a miss of
/// 2 x (8 + 4 + 16) = 56 cycles.
fn spec() -> XipSpec {
    XipSpec {
        region: "xip".into(),
        windows: vec![
            (0x1000_0000, 0x1020_0000, Alias::Cached),
            (0x1100_0000, 0x1120_0000, Alias::NoAllocate),
            (0x1200_0000, 0x1220_0000, Alias::NoCheck),
            (0x1300_0000, 0x1320_0000, Alias::Bypass),
        ],
        line_bytes: 8,
        sets: 1024,
        ways: 2,
        miss_cycles: 56,
        control: 0x1400_0000,
        reset: CTRL_EN | CTRL_ERR_BADWRITE,
        rp2350: None,
    }
}

#[test]
fn a_line_misses_once_then_hits() {
    let mut x = XipState::new(&spec());
    assert_eq!(x.fetch_block(Alias::Cached, &[0, 1, 2]), 3 * 56);
    assert_eq!(x.fetch_block(Alias::Cached, &[0, 1, 2]), 0);
    assert_eq!((x.stats.fetch_hits, x.stats.fetch_misses), (3, 3));
    x.write_flush(1);
    assert_eq!(x.fetch_block(Alias::Cached, &[1]), 56, "flushed");
    x.write_flush(0);
    assert_eq!(x.fetch_block(Alias::Cached, &[1]), 0, "0 does not flush");
}

#[test]
fn two_lines_of_a_set_fit_three_thrash() {
    let mut x = XipState::new(&spec());
    // lines 1024 apart (8 KiB) share a set
    let (a, b, c) = (5, 5 + 1024, 5 + 2048);
    x.fetch_block(Alias::Cached, &[a, b]);
    assert_eq!(x.fetch_block(Alias::Cached, &[a, b]), 0);
    // a b c in turn, least recently used replaced: every access misses
    x.fetch_block(Alias::Cached, &[c]);
    for _ in 0..3 {
        assert_eq!(x.fetch_block(Alias::Cached, &[a, b, c]), 3 * 56);
    }
}

#[test]
fn the_aliases_check_and_allocate_as_the_datasheet_says() {
    let mut x = XipState::new(&spec());
    // 0x11: no allocation, so never a hit on its own
    assert_eq!(
        x.read_data(Alias::NoAllocate, 9) + x.read_data(Alias::NoAllocate, 9),
        112
    );
    // 0x12 fills without looking: always a miss, and then 0x11 hits
    assert_eq!(x.read_data(Alias::NoCheck, 9), 56);
    assert_eq!(x.read_data(Alias::NoCheck, 9), 56);
    assert_eq!(x.read_data(Alias::NoAllocate, 9), 0);
    assert_eq!(x.read_data(Alias::Cached, 9), 0);
    // 0x13 bypasses even a cached line
    assert_eq!(x.read_data(Alias::Bypass, 9), 56);
    assert_eq!((x.stats.data_hits, x.stats.data_misses), (2, 5));
    assert_eq!(x.stats.data_stall, 5 * 56);
}

#[test]
fn a_disabled_cache_is_neither_looked_up_nor_filled() {
    let mut x = XipState::new(&spec());
    x.fetch_block(Alias::Cached, &[3]);
    x.write_ctrl(0);
    assert_eq!(x.fetch_block(Alias::Cached, &[3, 4]), 2 * 56);
    x.write_ctrl(CTRL_EN);
    assert_eq!(x.fetch_block(Alias::Cached, &[3]), 0, "kept while disabled");
    assert_eq!(
        x.fetch_block(Alias::Cached, &[4]),
        56,
        "not filled while disabled"
    );
    // POWER_DOWN forces EN to 0
    x.write_ctrl(CTRL_EN | CTRL_POWER_DOWN);
    assert_eq!(x.ctrl(), CTRL_POWER_DOWN);
}

fn file() -> XipFile {
    let c = |value: u64| Cited {
        value,
        cite: "datasheet".into(),
    };
    XipFile {
        kind: "rp2040-xip".into(),
        region: "xip".into(),
        aliases: AliasesFile {
            noallocate: "xip_noalloc".into(),
            nocheck: "xip_nocache".into(),
            bypass: "xip_nocache_noalloc".into(),
            uncached: None,
            untranslated: None,
            cite: "datasheet".into(),
        },
        cache_bytes: c(16384),
        ways: c(2),
        line_bytes: c(8),
        replacement: "model".into(),
        miss: MissFile {
            clkdiv: 2,
            address_clocks: 8,
            wait_clocks: 4,
            data_lines: 4,
            cooldown: None,
            pagebreak: None,
            cite: "boot2".into(),
        },
        control: c(0x1400_0000),
        reset: c(3),
        maintenance: None,
        fetch_bytes: None,
    }
}

fn regions() -> Vec<(String, u64, u64)> {
    [
        ("xip", 0x1000_0000),
        ("xip_noalloc", 0x1100_0000),
        ("xip_nocache", 0x1200_0000),
        ("xip_nocache_noalloc", 0x1300_0000),
    ]
    .iter()
    .map(|(n, s)| (n.to_string(), *s, s + 0x20_0000))
    .collect()
}

#[test]
fn the_table_is_validated_field_by_field() {
    assert_eq!(validate(file(), &regions()), Ok(spec()));
    let field = |edit: fn(&mut XipFile)| {
        let mut f = file();
        edit(&mut f);
        validate(f, &regions()).unwrap_err().0
    };
    assert_eq!(field(|f| f.kind = "xip".into()), "xip.kind");
    assert_eq!(field(|f| f.region = "nowhere".into()), "xip.region");
    assert_eq!(
        field(|f| f.aliases.bypass = "xip".into()),
        "xip.aliases.bypass"
    );
    assert_eq!(field(|f| f.ways.value = 3), "xip.ways.value");
    assert_eq!(
        field(|f| f.line_bytes.cite = " ".into()),
        "xip.line_bytes.cite"
    );
    assert_eq!(field(|f| f.miss.clkdiv = 3), "xip.miss.clkdiv");
    assert_eq!(field(|f| f.miss.data_lines = 3), "xip.miss.data_lines");
    assert_eq!(
        field(|f| f.control.value = 0x1000_0000),
        "xip.control.value"
    );
    assert_eq!(field(|f| f.reset.value = 0x10), "xip.reset.value");
    assert_eq!(field(|f| f.cache_bytes.value = 8), "xip.cache_bytes.value");
}

#[test]
fn the_rp2040_target_file_is_read_and_checked() {
    use crate::model::target::{builtin, builtin_names, catalog, Target};
    let t = builtin("rp2040").unwrap();
    let x = t.xip.as_ref().unwrap();
    assert_eq!(
        (x.sets, x.ways, x.line_bytes, x.miss_cycles),
        (1024, 2, 8, 56)
    );
    assert_eq!(
        x.window(0x1100_0010),
        Some((0x1100_0000, Alias::NoAllocate))
    );
    // every other built-in target has no XIP cache: priced as before
    for name in builtin_names()
        .iter()
        .filter(|n| !["rp2040", "rp2350", "rp2350-arm"].contains(&n.as_str()))
    {
        assert!(builtin(name).unwrap().xip.is_none(), "{name}");
    }
    let text = catalog::BUILTIN
        .iter()
        .find(|(n, _)| *n == "rp2040")
        .unwrap()
        .1;
    for (from, to, field) in [
        ("clkdiv = 2,", "clkdiv = 1,", "xip.miss.clkdiv"),
        (
            "bypass = \"xip_nocache_noalloc\"",
            "bypass = \"sram\"",
            "xip.aliases.bypass",
        ),
        (
            "value = 0x14000000",
            "value = 0x20000000",
            "xip.control.value",
        ),
    ] {
        let bad = text.replace(from, to);
        assert_ne!(bad, text, "{from}");
        let err = Target::parse(&bad, std::path::Path::new("rp2040.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(field) && err.contains("rp2040.toml"), "{err}");
    }
}

/// The RP2350's: the RP2040's geometry, and the QMI as the bootrom leaves
/// it (a line 3 x (16 + 4 + 16) = 108, chained 48).
fn spec_rp2350() -> XipSpec {
    XipSpec {
        windows: vec![
            (0x1000_0000, 0x1040_0000, Alias::Cached),
            (0x1400_0000, 0x1440_0000, Alias::Bypass),
        ],
        miss_cycles: 108,
        control: 0x400c_8000,
        reset: 0x83,
        rp2350: Some(rp2350::Rp2350Spec {
            maintenance: 0x1800_0000,
            fetch_bytes: 4,
            qmi: rp2350::QmiTiming {
                clkdiv: 3,
                head: 20,
                data_lines: 4,
                cooldown: 66,
                pagebreak: 1024,
            },
        }),
        ..spec()
    }
}

#[test]
fn maintenance_invalidates_the_way_or_the_line_it_names() {
    let mut x = XipState::new(&spec_rp2350());
    // lines 5 and 5 + 1024 share set 5; far apart in time: no chaining
    let (a, b) = (5, 5 + 1024);
    assert_eq!(x.fetch_block_qmi(Alias::Cached, &[a], &[], 4, 0), 108);
    assert_eq!(x.fetch_block_qmi(Alias::Cached, &[b], &[], 4, 1000), 108);
    // a went into the set's first free way, b into the other: invalidate
    // by set/way (operation 0) the way holding a, bit 13 clear
    x.maintain(5 << 3).unwrap();
    assert_eq!(x.fetch_block_qmi(Alias::Cached, &[b], &[], 4, 2000), 0);
    assert_eq!(x.fetch_block_qmi(Alias::Cached, &[a], &[], 4, 3000), 108);
    // invalidate by address (operation 2) of b; clean (3) changes nothing
    x.maintain((u64::from(b) << 3) | 2).unwrap();
    x.maintain((u64::from(a) << 3) | 3).unwrap();
    assert_eq!(x.fetch_block_qmi(Alias::Cached, &[a], &[], 4, 4000), 0);
    assert_eq!(x.fetch_block_qmi(Alias::Cached, &[b], &[], 4, 5000), 108);
    assert_eq!(x.stats.maintenance, 3);
    assert!(x.maintain(7).is_err(), "pin is refused");
}

#[test]
fn the_rp2350_reads_uncached_words_and_chains_them() {
    let mut x = XipState::new(&spec_rp2350());
    // through the uncached window: words 0..3, one new, three chained
    assert_eq!(
        x.fetch_block_qmi(Alias::Bypass, &[0, 1], &[0, 1, 2, 3], 4, 0),
        3 * (20 + 8) + 3 * 3 * 8
    );
    assert_eq!(x.stats.fetch_misses, 4);
    // EN_SECURE clear: the cached window reads words too, nothing cached
    x.write_ctrl_rp2350(0x82).unwrap();
    assert_eq!(x.read_data_qmi(Alias::Cached, 64, 1, 10_000), 3 * (20 + 2));
    x.write_ctrl_rp2350(0x83).unwrap();
    assert_eq!(x.read_data_qmi(Alias::Cached, 64, 1, 20_000), 108);
    assert_eq!(x.read_data_qmi(Alias::Cached, 66, 2, 30_000), 0, "a hit");
}
