//! The search index (docs/spec.md §3.14): every searchable skill's fields
//! cut into units once, each distinct unit with its stem and where it
//! occurs, and the BM25F score of a query over them.
//!
//! Building it folds, cuts and stems every name and description, which
//! costs far more than a query; a reused instance keeps the index of the
//! last listing and builds again only when a name or description changed
//! (`Index::for_skills`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::terms;
use super::text::{self, Unit};

/// The BM25F weight of each field a skill is searched by, in the order the
/// caller gives their texts: the name, the description. A third field
/// (`whenToUse`, which `skill-summary` carries since contract 0.3.0) would
/// be one more weight here and one more text per skill.
pub const FIELD_WEIGHTS: [f64; 2] = [3.0, 1.0];
/// How many fields a skill is searched by.
pub const FIELD_COUNT: usize = FIELD_WEIGHTS.len();

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation, the same for every field.
const B: f64 = 0.75;

/// Where one distinct unit occurs: in which skill, which field, how often.
#[derive(Debug, Clone, Copy)]
struct Posting {
    skill: u32,
    field: u8,
    count: u32,
}

/// One distinct unit of the indexed fields.
#[derive(Debug)]
struct Entry {
    text: String,
    lone_spaceless: bool,
    postings: Vec<Posting>,
}

/// The index of one listing's searchable skills, in listing order.
#[derive(Debug)]
pub struct Index {
    /// Each skill's field texts as listed: what the index was built from.
    texts: Vec<[String; FIELD_COUNT]>,
    /// The distinct units, sorted by text, so that the units a word starts
    /// are one range.
    vocabulary: Vec<Entry>,
    /// Each entry's stem with its position in `vocabulary`, sorted.
    stems: Vec<(String, u32)>,
    /// Each skill's number of units per field.
    lengths: Vec<[u32; FIELD_COUNT]>,
    /// The mean of `lengths` per field.
    mean_lengths: [f64; FIELD_COUNT],
}

thread_local! {
    /// The index of the last listing searched.
    static LAST: RefCell<Option<Rc<Index>>> = const { RefCell::new(None) };
}

impl Index {
    /// The index of `skills` (their field texts, in order): the one kept
    /// from the last search when they are the same, else built and kept.
    pub fn for_skills(skills: &[[&str; FIELD_COUNT]]) -> Rc<Index> {
        LAST.with(|last| {
            let mut last = last.borrow_mut();
            if let Some(index) = last.as_ref().filter(|index| index.indexes(skills)) {
                return Rc::clone(index);
            }
            let index = Rc::new(Index::build(skills));
            *last = Some(Rc::clone(&index));
            index
        })
    }

    fn indexes(&self, skills: &[[&str; FIELD_COUNT]]) -> bool {
        self.texts.len() == skills.len()
            && self.texts.iter().zip(skills).all(|(held, listed)| held.iter().zip(listed).all(|(a, b)| a == b))
    }

    /// Indexes `skills` afresh.
    pub fn build(skills: &[[&str; FIELD_COUNT]]) -> Index {
        let mut found: BTreeMap<String, (bool, Vec<Posting>)> = BTreeMap::new();
        let mut lengths = Vec::with_capacity(skills.len());
        for (skill, fields) in skills.iter().enumerate() {
            let mut length = [0; FIELD_COUNT];
            for (field, field_text) in fields.iter().enumerate() {
                let units = text::units(&text::fold(field_text));
                length[field] = units.len() as u32;
                for unit in units {
                    let (_, postings) = found.entry(unit.text).or_insert_with(|| (unit.lone_spaceless, Vec::new()));
                    match postings.last_mut() {
                        Some(last) if last.skill == skill as u32 && last.field == field as u8 => last.count += 1,
                        _ => postings.push(Posting { skill: skill as u32, field: field as u8, count: 1 }),
                    }
                }
            }
            lengths.push(length);
        }
        // A BTreeMap's order: the vocabulary comes out sorted.
        let vocabulary: Vec<Entry> = found
            .into_iter()
            .map(|(text, (lone_spaceless, postings))| Entry { text, lone_spaceless, postings })
            .collect();
        let mut stems: Vec<(String, u32)> = (0..)
            .zip(&vocabulary)
            .map(|(id, entry)| {
                (terms::stem(&Unit { text: entry.text.clone(), lone_spaceless: entry.lone_spaceless }), id)
            })
            .collect();
        stems.sort_unstable();
        let mut mean_lengths = [0.0; FIELD_COUNT];
        for (field, mean) in mean_lengths.iter_mut().enumerate() {
            let total: f64 = lengths.iter().map(|length| f64::from(length[field])).sum();
            *mean = total / lengths.len().max(1) as f64;
        }
        let texts = skills.iter().map(|fields| fields.map(str::to_owned)).collect();
        Index { texts, vocabulary, stems, lengths, mean_lengths }
    }

    /// Each skill's BM25F score for the query `words` (0 when no word
    /// matches it), in listing order.
    pub fn scores(&self, words: &[Unit]) -> Vec<f64> {
        let skills = self.lengths.len();
        let mut scores = vec![0.0; skills];
        let mut frequencies = vec![[0u32; FIELD_COUNT]; skills];
        let mut touched: Vec<u32> = Vec::new();
        for word in words {
            for id in self.matching(word) {
                for posting in &self.vocabulary[id as usize].postings {
                    let frequency = &mut frequencies[posting.skill as usize];
                    if *frequency == [0; FIELD_COUNT] {
                        touched.push(posting.skill);
                    }
                    frequency[posting.field as usize] += posting.count;
                }
            }
            let idf = inverse_document_frequency(skills, touched.len());
            for &skill in &touched {
                let frequency = std::mem::take(&mut frequencies[skill as usize]);
                let weighted = self.weighted_frequency(skill as usize, &frequency);
                scores[skill as usize] += idf * weighted * (K1 + 1.0) / (weighted + K1);
            }
            touched.clear();
        }
        scores
    }

    /// BM25F's pseudo-frequency: each field's count, normalised by its
    /// length against the mean, times its weight, summed.
    fn weighted_frequency(&self, skill: usize, frequency: &[u32; FIELD_COUNT]) -> f64 {
        let mut weighted = 0.0;
        for field in 0..FIELD_COUNT {
            if frequency[field] > 0 {
                let relative = f64::from(self.lengths[skill][field]) / self.mean_lengths[field];
                weighted += FIELD_WEIGHTS[field] * f64::from(frequency[field]) / (1.0 - B + B * relative);
            }
        }
        weighted
    }

    /// The vocabulary entries the query word `word` matches, ascending: those
    /// with its stem; those the word or its stem starts, when that is 3
    /// characters or more (`simplify`, stem `simplifi`, finds
    /// `simplification`, stem `simplif`); for a lone character of a
    /// spaceless script, those holding it.
    fn matching(&self, word: &Unit) -> Vec<u32> {
        let stem = terms::stem(word);
        let first = self.stems.partition_point(|(known, _)| known.as_str() < stem.as_str());
        let mut ids: Vec<u32> =
            self.stems[first..].iter().take_while(|(known, _)| *known == stem).map(|&(_, id)| id).collect();
        for start in [word.text.as_str(), stem.as_str()] {
            if start.chars().count() >= 3 {
                let first = self.vocabulary.partition_point(|entry| entry.text.as_str() < start);
                let starting = self.vocabulary[first..].iter().take_while(|entry| entry.text.starts_with(start));
                ids.extend((first..).zip(starting).map(|(id, _)| id as u32));
            }
        }
        if word.lone_spaceless {
            let holding = self.vocabulary.iter().enumerate().filter(|(_, entry)| entry.text.contains(&word.text));
            ids.extend(holding.map(|(id, _)| id as u32));
        }
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// BM25's idf, `ln(1 + (N - n + 0.5) / (n + 0.5))` for `n` of `N` skills
/// matching: always above 0, so every match adds to a score.
fn inverse_document_frequency(skills: usize, matching: usize) -> f64 {
    let (skills, matching) = (skills as f64, matching as f64);
    natural_log(1.0 + (skills - matching + 0.5) / (matching + 0.5))
}

/// `ln(x)` for `x >= 1` from IEEE-exact operations only (`+ - * /`, the
/// exponent bits), so that every target and host computes the same bits:
/// `f64::ln` calls the platform's libm, whose last bit may differ, and a
/// score that differs in its last bit could swap two skills.
fn natural_log(x: f64) -> f64 {
    debug_assert!(x >= 1.0 && x.is_finite());
    const LN_2: f64 = std::f64::consts::LN_2;
    // x = m · 2^e with m in [1, 2).
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mantissa = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    // ln m = 2 · atanh(z) = 2 · (z + z³/3 + z⁵/5 + …), z = (m − 1)/(m + 1) < 1/3.
    let z = (mantissa - 1.0) / (mantissa + 1.0);
    let z2 = z * z;
    let mut power = z;
    let mut sum = 0.0;
    for k in 0..20 {
        sum += power / f64::from(2 * k + 1);
        power *= z2;
    }
    exponent as f64 * LN_2 + 2.0 * sum
}

#[cfg(test)]
mod tests;
