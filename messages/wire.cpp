// The schema pass of Open(): reads every declared field once, through
// capnp's reflection, so that type mismatches throw here and not in a handler.
#include "messages/wire.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/deserializer.hpp>
#include <caf/error.hpp>
#include <caf/sec.hpp>
#include <capnp/dynamic.h>

namespace actorrec::wire::detail {
namespace {

void ReadStruct(capnp::DynamicStruct::Reader s);

// True when fields of `type` are pointers, which reading checks. (AnyPointer
// and capabilities declare no type to check against; our schemas use neither.)
bool IsPointer(capnp::Type type) {
  switch (type.which()) {
    case capnp::schema::Type::STRUCT:
    case capnp::schema::Type::TEXT:
    case capnp::schema::Type::DATA:
    case capnp::schema::Type::LIST:
      return true;
    default:
      return false;
  }
}

// True when each element of a list of `type` must be read: it is a pointer,
// or a struct that holds some.
bool ElementsHavePointers(capnp::Type type) {
  if (type.isStruct()) return type.asStruct().getProto().getStruct().getPointerCount() > 0;
  return IsPointer(type);
}

// `value` has already been read as its declared type (which is where kind and
// element-size mismatches throw); this follows what it points to.
void ReadValue(const capnp::DynamicValue::Reader& value) {
  switch (value.getType()) {
    case capnp::DynamicValue::STRUCT:
      ReadStruct(value.as<capnp::DynamicStruct>());
      break;
    case capnp::DynamicValue::LIST: {
      auto list = value.as<capnp::DynamicList>();
      // Lists of plain values and of pointer-free structs are fully checked
      // by reading the list pointer; walking their elements would cost time
      // for nothing (RowSlot lists run to 10^5 entries).
      if (!ElementsHavePointers(list.getSchema().getElementType())) break;
      for (auto element : list) ReadValue(element);
      break;
    }
    default:
      // Text and Data were checked when read (NUL terminator, byte elements);
      // AnyPointer and capabilities have no declared type to check against.
      break;
  }
}

void ReadField(capnp::DynamicStruct::Reader s, capnp::StructSchema::Field field) {
  const auto proto = field.getProto();
  if (proto.isGroup() || IsPointer(field.getType())) ReadValue(s.get(field));
}

void ReadStruct(capnp::DynamicStruct::Reader s) {
  for (auto field : s.getSchema().getNonUnionFields()) ReadField(s, field);
  // An unknown discriminant (a newer schema's member) is not an error here.
  KJ_IF_MAYBE(member, s.which()) { ReadField(s, *member); }
}

}  // namespace

void ReadEveryField(capnp::AnyStruct::Reader root, capnp::StructSchema schema) {
  ReadStruct(root.as<capnp::DynamicStruct>(schema));
}

caf::error LoadFrameBytes(caf::deserializer& in, std::vector<char>& bytes) {
  size_t n = 0;
  if (auto err = in.begin_sequence(n)) return err;
  // CAF reads messages from memory with a binary_deserializer, which knows
  // what is left; another deserializer gets the transport's own bound
  // (base/frame_bound.hpp: no message above 1 GiB crosses the network).
  const auto* binary = dynamic_cast<const caf::binary_deserializer*>(&in);
  const size_t available = binary != nullptr ? binary->remaining() : size_t{1} << 30;
  if (n > available) {
    return caf::make_error(caf::sec::invalid_argument, "a frame announces " + std::to_string(n) +
                                                           " bytes, more than its message holds (" +
                                                           std::to_string(available) + ")");
  }
  bytes.resize(n);
  if (n > 0) {
    if (auto err = in.apply_raw(n, bytes.data())) return err;
  }
  return in.end_sequence();
}

}  // namespace actorrec::wire::detail
