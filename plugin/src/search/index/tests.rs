//! The index: BM25F scores, the kept index, the logarithm.

use super::*;

#[test]
fn natural_log_is_close_to_the_platform_one() {
    for x in [1.0, 1.000_001, 1.5, 2.0, std::f64::consts::E, 3.0, 10.0, 1000.5, 1e6] {
        let ours = natural_log(x);
        assert!((ours - x.ln()).abs() <= 1e-14 * x.ln().max(1.0), "{x}: {ours} against {}", x.ln());
    }
}

#[test]
fn the_last_index_is_kept_until_a_text_changes() {
    let first = Index::for_skills(&[["pdf-tools", "Fill in PDF forms."], ["gif-maker", "Make GIFs."]]);
    let again = Index::for_skills(&[["pdf-tools", "Fill in PDF forms."], ["gif-maker", "Make GIFs."]]);
    assert!(Rc::ptr_eq(&first, &again));
    let changed = Index::for_skills(&[["pdf-tools", "Fill in PDF forms."], ["gif-maker", "Make animated GIFs."]]);
    assert!(!Rc::ptr_eq(&first, &changed));
    let fewer = Index::for_skills(&[["pdf-tools", "Fill in PDF forms."]]);
    assert!(!Rc::ptr_eq(&changed, &fewer));
}

#[test]
fn scores_are_bm25f_over_name_and_description() {
    let index = Index::build(&[["pdf-tools", "Fill in PDF forms."], ["gif-maker", "Make GIFs."]]);
    let word = |text: &str| Unit { text: text.to_owned(), lone_spaceless: false };
    let scores = index.scores(&[word("pdf")]);
    // pdf-tools: one name unit of 2 (mean 2), one description unit of 4
    // (mean 3); 1 of 2 skills match.
    let idf = (1.0f64 + 1.5 / 1.5).ln();
    let name = 3.0 / (1.0 - B + B * 2.0 / 2.0);
    let description = 1.0 / (1.0 - B + B * 4.0 / 3.0);
    let weighted = name + description;
    let expected = idf * weighted * (K1 + 1.0) / (weighted + K1);
    assert!((scores[0] - expected).abs() < 1e-12, "{} against {expected}", scores[0]);
    assert_eq!(scores[1], 0.0);
    // "gifs" and "gif" share a stem; words accumulate.
    let both = index.scores(&[word("gif"), word("pdf")]);
    assert!(both[0] == scores[0] && both[1] > 0.0);
}
