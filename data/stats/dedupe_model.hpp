// The RecD model of duplicate feature values in session data (Zhao et al.,
// "RecD: Deduplication for End-to-End Deep Learning Recommendation Model
// Training Infrastructure", MLSys 2023): samples come in sessions of S, and
// within a session a feature keeps the previous sample's value with
// probability d. Its DedupeFactor is the number of values a batch carries
// over the number of distinct ones, what an IKJT saves over a KJT.
//
// The model counts only session repeats: it assumes that fresh values never
// coincide (true for large uniform tables, not for a skewed feature, whose
// hot rows also repeat across sessions, so that the measured factor is
// higher; the statistics print both).
#pragma once

#include <cstdint>

namespace actorrec::data::stats {

// The expected number of distinct values among samples [first, first +
// count) of a stream whose sessions start at multiples of S: the first sample
// and each session start bring a new value, every other sample one with
// probability 1 - d. REQUIRES: S >= 1, 0 <= d <= 1.
double ExpectedUniqueBags(uint64_t first, uint64_t count, uint32_t session_length, double dup_prob);

// The DedupeFactor of batches made of whole sessions: S / (1 + (S - 1)(1 - d)).
// E.g. S = 8: d = 0.9 (user-like) gives 4.71, d = 0.1 (item-like) 1.10.
double ModelDedupeFactor(uint32_t session_length, double dup_prob);

}  // namespace actorrec::data::stats
