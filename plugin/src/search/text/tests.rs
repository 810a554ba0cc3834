use super::*;

fn texts(text: &str) -> Vec<String> {
    units(&fold(text)).into_iter().map(|unit| unit.text).collect()
}

#[test]
fn folding_is_nfkc_then_full_case_folding() {
    // Full case folding, not lower-casing: ß and ẞ become "ss".
    assert_eq!(fold("Straße"), "strasse");
    assert_eq!(fold("STRASSE"), fold("straẞe"));
    // NFC and NFD fold alike.
    assert_eq!(fold("Re\u{301}sume\u{301}"), fold("Résumé"));
    assert_eq!(fold("Résumé"), "résumé");
    // Compatibility forms: full-width letters, ligatures, half-width kana.
    assert_eq!(fold("ＰＤＦ"), "pdf");
    assert_eq!(fold("ﬁle"), "file");
    assert_eq!(fold("ﾄﾞｷｭﾒﾝﾄ"), "ドキュメント");
    // Greek final sigma folds to sigma.
    assert_eq!(fold("ΟΔΟΣ"), fold("οδος"));
    // ASCII is only lower-cased.
    assert_eq!(fold("Release-NOTES 2"), "release-notes 2");
}

#[test]
fn spaceless_scripts_give_character_bigrams() {
    assert_eq!(
        texts("日本語のドキュメントを翻訳する。"),
        [
            "日本", "本語", "語の", "のド", "ドキ", "キュ", "ュメ", "メン", "ント", "トを", "を翻", "翻訳", "訳す",
            "する"
        ]
    );
    assert_eq!(texts("한국어 문서"), ["한국", "국어", "문서"]);
    // A one-character part is its own unit, and marks it as lone.
    assert_eq!(units("本"), [Unit { text: "本".to_owned(), lone_spaceless: true }]);
    // Scripts with spaces keep their words; a run is cut where it changes.
    assert_eq!(texts("PDFを変換 and Straße"), ["pdf", "を変", "変換", "and", "strasse"]);
    assert_eq!(texts("第3章"), ["第", "3", "章"]);
    assert!(texts("。、 -- ").is_empty());
}

#[test]
fn the_spaceless_scripts_are_han_kana_and_hangul() {
    for c in ['日', '々', '〇', '\u{3400}', '\u{20000}', 'の', 'ド', 'ー', 'ㇰ', '한', 'ᄀ', 'ㄱ'] {
        assert!(is_spaceless(c), "{c:?}");
    }
    for c in ['a', 'é', 'ß', 'Ω', 'я', 'ก', '。', '、', '1', '１'] {
        assert!(!is_spaceless(c), "{c:?}");
    }
}
