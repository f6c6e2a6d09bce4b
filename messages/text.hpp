// Conversions between Cap'n Proto Text/Data and std::string, and the
// ErrorReply every shell answers a bad request with.
#pragma once

#include <capnp/blob.h>

#include <string>

#include "messages/kinds.hpp"

namespace actorrec::wire {

inline std::string Str(capnp::Text::Reader t) { return std::string(t.begin(), t.size()); }
inline std::string Bytes(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char*>(d.begin()), d.size());
}
inline capnp::Text::Reader AsText(const std::string& s) { return capnp::Text::Reader(s.data(), s.size()); }
inline capnp::Data::Reader AsData(const std::string& s) {
  return capnp::Data::Reader(reinterpret_cast<const kj::byte*>(s.data()), s.size());
}

// An ErrorReply frame; `message` names the actor and what was wrong.
inline Frame<ErrorReply> MakeError(ErrorReply::Kind kind, const std::string& message) {
  return Encode<ErrorReply>([&](ErrorReply::Builder b) {
    b.setKind(kind);
    b.setMessage(AsText(message));
  });
}

}  // namespace actorrec::wire
