//! Property tests: no input makes the lexer, the parser, the vector type
//! reader or the hardware reader panic, and every diagnostic has a
//! position inside the input.

use chips_eval::parser::parse_object_recovering;
use chips_eval::vectypes::VectorTypes;
use chips_eval::HardwareModel;
use proptest::prelude::*;

/// Fragments of CHIP3S text, so that generated inputs get deep into the
/// grammar rather than failing on the first token.
const FRAGMENTS: &[&str] = &[
    "application",
    "subtask",
    "partmp",
    "a",
    "b",
    "include",
    "var",
    "dtdp",
    "scope",
    "numeric",
    "vector",
    "string",
    "defgroup",
    "link",
    "option",
    "proc",
    "cflow",
    "exec",
    "compute",
    "loop",
    "case",
    "call",
    "if",
    "then",
    "else",
    "while",
    "break",
    "continue",
    "print",
    "return",
    "exit",
    "dim",
    "free",
    "step",
    "confdev",
    "is",
    "hllc",
    "IASG",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ":",
    ",",
    ".",
    "=",
    "+",
    "-",
    "*",
    "/",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
    "0",
    "1.5",
    "2e3",
    "\"s\"",
    "(*",
    "*)",
    " ",
    "\n",
    "$",
    "\"",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..120).prop_map(|v| v.join(" "))
}

fn check(src: &str) {
    let (_obj, diags) = parse_object_recovering("fuzz.la", src);
    let lines = src.split('\n').count() as u32;
    for d in diags {
        assert!(
            d.span.line >= 1 && d.span.line <= lines,
            "{d} outside input of {lines} lines"
        );
        assert!(d.span.col >= 1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(src in any::<String>()) {
        check(&src);
    }

    #[test]
    fn token_soup_never_panics(src in soup()) {
        check(&src);
    }

    #[test]
    fn object_prefix_soup_never_panics(body in soup()) {
        check(&format!("partmp t {{ option {{ nstage = 1 }} proc exec init {{ {body} }} }}"));
        check(&format!("subtask s {{ option {{ }} proc cflow T {{ {body} }} }}"));
    }

    #[test]
    fn vector_definitions_never_panic(src in soup()) {
        let _ = VectorTypes::default().add_definitions("v.vct", &format!("def x {{ {src} }}"));
    }

    #[test]
    fn hardware_files_never_panic(src in any::<String>()) {
        let _ = HardwareModel::from_toml("h.toml", &src);
    }
}

#[test]
fn deep_nesting_is_a_diagnostic_not_a_stack_overflow() {
    for (open, close) in [("(", ")"), ("-", "")] {
        let depth = 5000;
        let src = format!(
            "application a {{ option {{ }} proc exec init {{ return {}1{}; }} }}",
            open.repeat(depth),
            close.repeat(depth)
        );
        let (_, d) = parse_object_recovering("deep.la", &src);
        assert!(
            d.iter().any(|x| x.message.contains("nesting deeper")),
            "{open}: {d:?}"
        );
    }
    let src = format!(
        "application a {{ option {{ }} proc exec init {{ {} return 1; {} }} }}",
        "{".repeat(5000),
        "}".repeat(5000)
    );
    let (_, d) = parse_object_recovering("deep.la", &src);
    assert!(d.iter().any(|x| x.message.contains("nesting deeper")));
}
