// DecodedFile: plain, gzip (zlib) or zstd bytes behind one Read.
#include "data/readers/decoded_file.hpp"

#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <vector>

namespace actorrec::data::readers {

namespace {
// Compressed bytes read per refill of the decoder's input.
constexpr size_t kInputBytes = size_t{1} << 20;
}  // namespace

struct DecodedFile::Decoder {
  ReadFile file;
  Encoding encoding = Encoding::kPlain;
  std::vector<char> in;       // compressed input; unread bytes are in[in_begin, in_end)
  size_t in_begin = 0, in_end = 0;
  bool file_done = false;     // the file's bytes are all in `in`
  z_stream gz{};
  bool gz_open = false;
  bool gz_member_done = false;  // between members of a multi-member gzip file
  ZSTD_DStream* zstd = nullptr;
  size_t zstd_pending = 0;    // ZSTD_decompressStream's hint: 0 once a frame is complete
  bool any_frame = false;

  explicit Decoder(ReadFile f) : file(std::move(f)) {}
  ~Decoder() {
    if (gz_open) inflateEnd(&gz);
    if (zstd != nullptr) ZSTD_freeDStream(zstd);
  }

  Status Fail(const std::string& why) const {
    return Status::IoError(file.path() + ": " + EncodingName(encoding) + " stream: " + why);
  }

  // Reads more compressed bytes when the input is used up.
  Status Fill() {
    if (in_begin < in_end || file_done) return Status::Ok();
    size_t got = 0;
    if (Status s = file.Read(in.data(), in.size(), &got); !s.ok()) return s;
    in_begin = 0;
    in_end = got;
    if (got == 0) file_done = true;
    return Status::Ok();
  }

  Status ReadGzip(char* buf, size_t n, size_t* got) {
    *got = 0;
    while (*got == 0) {
      if (Status s = Fill(); !s.ok()) return s;
      if (in_begin == in_end && file_done) {
        if (!gz_member_done) return Fail("truncated: the file ends inside a compressed member");
        return Status::Ok();  // end of the data
      }
      if (gz_member_done) {
        // Another member follows (as `cat a.gz b.gz` makes): start it afresh.
        if (inflateReset(&gz) != Z_OK) return Fail("cannot reset the decoder");
        gz_member_done = false;
      }
      gz.next_in = reinterpret_cast<Bytef*>(in.data() + in_begin);
      gz.avail_in = static_cast<uInt>(in_end - in_begin);
      gz.next_out = reinterpret_cast<Bytef*>(buf);
      gz.avail_out = static_cast<uInt>(std::min<size_t>(n, UINT32_MAX));
      const int rc = inflate(&gz, Z_NO_FLUSH);
      in_begin = in_end - gz.avail_in;
      *got = n - gz.avail_out;
      if (rc == Z_STREAM_END) {
        gz_member_done = true;
      } else if (rc == Z_BUF_ERROR) {
        // No progress possible without more input: loop to Fill (or fail at the end).
        if (in_begin < in_end) return Fail("the decoder made no progress");
      } else if (rc != Z_OK) {
        return Fail(std::string("corrupt data (") + (gz.msg != nullptr ? gz.msg : "zlib error " + std::to_string(rc)) +
                    ")");
      }
    }
    return Status::Ok();
  }

  Status ReadZstd(char* buf, size_t n, size_t* got) {
    *got = 0;
    while (*got == 0) {
      if (Status s = Fill(); !s.ok()) return s;
      if (in_begin == in_end && file_done) {
        if (zstd_pending != 0 || !any_frame) return Fail("truncated: the file ends inside a frame");
        return Status::Ok();
      }
      ZSTD_inBuffer input{in.data() + in_begin, in_end - in_begin, 0};
      ZSTD_outBuffer output{buf, n, 0};
      const size_t rc = ZSTD_decompressStream(zstd, &output, &input);
      if (ZSTD_isError(rc)) return Fail(std::string("corrupt data (") + ZSTD_getErrorName(rc) + ")");
      any_frame = true;
      zstd_pending = rc;
      in_begin += input.pos;
      *got = output.pos;
    }
    return Status::Ok();
  }
};

Result<DecodedFile> DecodedFile::Open(const std::string& path) {
  auto file = ReadFile::Open(path);
  if (!file.ok()) return file.status();
  auto d = std::make_unique<Decoder>(std::move(file).value());
  d->in.resize(kInputBytes);
  if (Status s = d->Fill(); !s.ok()) return s;
  const unsigned char* b = reinterpret_cast<const unsigned char*>(d->in.data());
  const size_t have = d->in_end;
  if (have >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
    d->encoding = Encoding::kGzip;
    // 16 + MAX_WBITS: a gzip header and trailer (CRC and length checked).
    if (inflateInit2(&d->gz, 16 + MAX_WBITS) != Z_OK) return d->Fail("cannot start the decoder");
    d->gz_open = true;
  } else if (have >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
    d->encoding = Encoding::kZstd;
    d->zstd = ZSTD_createDStream();
    if (d->zstd == nullptr) return d->Fail("cannot start the decoder");
    ZSTD_initDStream(d->zstd);
  }
  return DecodedFile(std::move(d));
}

DecodedFile::DecodedFile(std::unique_ptr<Decoder> decoder) : decoder_(std::move(decoder)) {}
DecodedFile::DecodedFile(DecodedFile&&) noexcept = default;
DecodedFile& DecodedFile::operator=(DecodedFile&&) noexcept = default;
DecodedFile::~DecodedFile() = default;

const std::string& DecodedFile::path() const { return decoder_->file.path(); }
DecodedFile::Encoding DecodedFile::encoding() const { return decoder_->encoding; }

Status DecodedFile::Read(char* buf, size_t n, size_t* got) {
  Decoder& d = *decoder_;
  if (n == 0) {
    *got = 0;
    return Status::Ok();
  }
  switch (d.encoding) {
    case Encoding::kGzip: return d.ReadGzip(buf, n, got);
    case Encoding::kZstd: return d.ReadZstd(buf, n, got);
    case Encoding::kPlain: break;
  }
  // Plain: the bytes Open read for the sniff first, then the file.
  if (d.in_begin < d.in_end) {
    *got = std::min(n, d.in_end - d.in_begin);
    std::memcpy(buf, d.in.data() + d.in_begin, *got);
    d.in_begin += *got;
    return Status::Ok();
  }
  if (d.file_done) {
    *got = 0;
    return Status::Ok();
  }
  return d.file.Read(buf, n, got);
}

Status DecodedFile::SkipTo(uint64_t offset) {
  Decoder& d = *decoder_;
  if (d.encoding != Encoding::kPlain) {
    return Status::InvalidArgument(path() + ": a " + EncodingName(d.encoding) +
                                   " stream cannot be read from the middle");
  }
  if (offset <= d.in_end) {  // still inside the bytes Open read for the sniff
    d.in_begin = static_cast<size_t>(offset);
    return Status::Ok();
  }
  d.in_begin = d.in_end;
  return d.file.Seek(offset);
}

const char* EncodingName(DecodedFile::Encoding encoding) {
  switch (encoding) {
    case DecodedFile::Encoding::kGzip: return "gzip";
    case DecodedFile::Encoding::kZstd: return "zstd";
    case DecodedFile::Encoding::kPlain: return "plain";
  }
  return "?";
}

}  // namespace actorrec::data::readers
