// Epochs and batches over a sample stream.
#include "actors/sampler/batch_sequence.hpp"

#include "data/bad_record_tally.hpp"

namespace actorrec {

BatchSequence::BatchSequence(SourceFactory factory, Options options)
    : factory_(std::move(factory)), options_(options), pos_(options.start) {
  ACTORREC_ASSERT(options_.batch_size > 0, "batch size must be positive");
  done_ = pos_.epoch >= options_.epochs;
}

Status BatchSequence::OpenEpoch(uint32_t epoch, uint64_t skip_batches) {
  auto reader = factory_(epoch);
  if (!reader.ok()) return reader.status();
  reader_ = std::move(reader.value());
  data::SampleBlock discard;
  for (uint64_t b = 0; b < skip_batches; ++b) {
    if (auto st = Fill(options_.batch_size, &discard); !st.ok()) return st;
    if (discard.empty()) {
      return Status::InvalidArgument("cannot restart at batch " + std::to_string(skip_batches) + " of epoch " +
                                     std::to_string(epoch) + ": the epoch has only " + std::to_string(b) +
                                     " batches");
    }
  }
  return Status::Ok();
}

Status BatchSequence::Fill(size_t n, data::SampleBlock* out) {
  // Readers may return fewer samples than asked before their end (at chunk
  // boundaries, say); a batch is complete only at n samples or the end.
  if (auto st = reader_->Next(n, out); !st.ok() || out->size() == n || out->empty()) return st;
  while (out->size() < n) {
    if (auto st = reader_->Next(n - out->size(), &scratch_); !st.ok()) return st;
    if (scratch_.empty()) break;
    out->Append(scratch_, 0, scratch_.size());
  }
  return Status::Ok();
}

Status BatchSequence::Next(data::Batch* out) {
  while (!done_) {
    if (options_.max_batches != 0 && produced_ >= options_.max_batches) {
      done_ = true;
      break;
    }
    if (!reader_) {
      if (auto st = OpenEpoch(pos_.epoch, pos_.batch); !st.ok()) return st;
    }
    if (auto st = Fill(options_.batch_size, &out->samples); !st.ok()) return st;
    if (out->samples.empty()) {  // end of this epoch
      if (pos_.batch == 0) {
        const Status none = data::NoSamples(options_.source, reader_->bad_records());
        return Status::InvalidArgument("epoch " + std::to_string(pos_.epoch) + ": " + none.message());
      }
      reader_.reset();
      ++pos_.epoch;
      pos_.batch = 0;
      done_ = pos_.epoch >= options_.epochs;
      continue;
    }
    out->epoch = pos_.epoch;
    out->index = pos_.batch;
    out->first_sample = pos_.batch * options_.batch_size;
    out->trainer = data::kWholeBatch;
    out->slice_begin = 0;
    out->slice_end = static_cast<uint32_t>(out->samples.size());
    ++pos_.batch;
    ++produced_;
    return Status::Ok();
  }
  out->samples.Reset(0, 0);
  return Status::Ok();
}

}  // namespace actorrec
