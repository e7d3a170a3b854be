#include "server/protobuf_body.h"

#include <cstdint>
#include <optional>
#include <string>

#include "common/base64.h"

namespace strata::server {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kMagic("k8s\0", 4);

// Protobuf's wire types.
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

// One field of a message: its number, wire type, and its value (a varint, or the bytes of a
// length-delimited field).
struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};

// Reads the fields of one message in `data`, which starts at `offset` in the whole body (for
// errors).
class MessageReader {
 public:
  MessageReader(std::string_view data, size_t offset) : data_(data), base_(offset) {}

  // The next field; nullopt at the end. InvalidArgument naming the body's offset of a malformed
  // field.
  Result<std::optional<Field>> Next() {
    if (at_ == data_.size()) return std::optional<Field>();
    const size_t start = at_;
    ASSIGN_OR_RETURN(uint64_t tag, Varint());
    Field field;
    field.number = static_cast<uint32_t>(tag >> 3);
    field.wire = static_cast<uint32_t>(tag & 7);
    if (field.number == 0 || tag >> 32 != 0) return Malformed(start, "a field number of 0");
    switch (field.wire) {
      case kVarint: {
        ASSIGN_OR_RETURN(field.varint, Varint());
        break;
      }
      case kFixed64:
      case kFixed32: {
        const size_t size = field.wire == kFixed64 ? 8 : 4;
        if (data_.size() - at_ < size) return Malformed(start, "a fixed-size value cut short");
        at_ += size;
        break;
      }
      case kBytes: {
        ASSIGN_OR_RETURN(uint64_t size, Varint());
        if (size > data_.size() - at_) return Malformed(start, "a length past the body's end");
        field.bytes = data_.substr(at_, size);
        at_ += size;
        break;
      }
      default:
        return Malformed(start, "wire type " + std::to_string(field.wire));
    }
    return std::optional<Field>(field);
  }

  // The body's offset of a field's bytes (for a nested message's reader).
  size_t OffsetOf(const Field& field) const {
    return base_ + static_cast<size_t>(field.bytes.data() - data_.data());
  }

 private:
  Result<uint64_t> Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == data_.size()) return Malformed(at_, "a varint cut short");
      const uint8_t byte = static_cast<uint8_t>(data_[at_++]);
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return Malformed(at_, "a varint longer than 10 bytes");
  }

  tl::unexpected<Status> Malformed(size_t at, const std::string& what) const {
    return Err(InvalidArgumentError("request body (protobuf) at byte " +
                                    std::to_string(base_ + at) + ": " + what));
  }

  std::string_view data_;
  size_t base_ = 0;
  size_t at_ = 0;
};

Status NotRead(std::string_view message, const Field& field) {
  return InvalidArgumentError("request body (protobuf): field " + std::to_string(field.number) +
                              " of " + std::string(message) +
                              " is not read by strata; send the object as JSON");
}

Result<std::string_view> BytesOf(std::string_view message, const Field& field) {
  if (field.wire != kBytes) {
    return Err(InvalidArgumentError("request body (protobuf): field " +
                                    std::to_string(field.number) + " of " + std::string(message) +
                                    " is not length-delimited"));
  }
  return field.bytes;
}

// A map entry (key = 1, value = 2) into `out`, the value base64 when `bytes_value`.
Status ReadMapEntry(const MessageReader& parent, const Field& entry, bool bytes_value, Json& out) {
  MessageReader reader(entry.bytes, parent.OffsetOf(entry));
  std::string key;
  std::string value;
  for (;;) {
    Result<std::optional<Field>> next = reader.Next();
    if (!next) return next.error();
    if (!*next) break;
    Result<std::string_view> bytes = BytesOf("a map entry", **next);
    if (!bytes) return bytes.error();
    if ((*next)->number == 1) {
      key = std::string(*bytes);
    } else if ((*next)->number == 2) {
      value = std::string(*bytes);
    } else {
      return NotRead("a map entry", **next);
    }
  }
  out[key] = bytes_value ? Base64Encode(value) : value;
  return Status();
}

Status ReadObjectMeta(const MessageReader& parent, const Field& field, Json& metadata) {
  MessageReader reader(field.bytes, parent.OffsetOf(field));
  for (;;) {
    Result<std::optional<Field>> next = reader.Next();
    if (!next) return next.error();
    if (!*next) return Status();
    const Field& f = **next;
    static constexpr const char* kStrings[] = {nullptr,    "name", "generateName",   "namespace",
                                               "selfLink", "uid",  "resourceVersion"};
    if (f.number >= 1 && f.number <= 6) {
      Result<std::string_view> bytes = BytesOf("ObjectMeta", f);
      if (!bytes) return bytes.error();
      // Go's encoder writes every string field, empty ones too; selfLink is not kept.
      if (f.number != 4 && !bytes->empty()) metadata[kStrings[f.number]] = std::string(*bytes);
    } else if (f.number == 7 || f.number == 8) {
      // generation and creationTimestamp, always written (zero when unset): the server's.
    } else if (f.number == 11 || f.number == 12) {
      if (f.wire != kBytes) return NotRead("ObjectMeta", f);
      Json& map = metadata[f.number == 11 ? "labels" : "annotations"];
      if (!map.is_object()) map = Json::object();
      if (Status read = ReadMapEntry(reader, f, false, map); !read.ok()) return read;
    } else {
      return NotRead("ObjectMeta", f);
    }
  }
}

// The fields of a kind's message past its metadata (field 1).
using ReadKindField = Status (*)(const MessageReader& reader, const Field& field, Json& object);

Status ReadNamespaceField(const MessageReader& reader, const Field& field, Json& object) {
  if (field.number == 2 && field.wire == kBytes) {  // spec: finalizers = 1
    MessageReader spec(field.bytes, reader.OffsetOf(field));
    for (;;) {
      Result<std::optional<Field>> next = spec.Next();
      if (!next) return next.error();
      if (!*next) return Status();
      if ((*next)->number != 1 || (*next)->wire != kBytes) return NotRead("NamespaceSpec", **next);
      object["spec"]["finalizers"].push_back(std::string((*next)->bytes));
    }
  }
  if (field.number == 3 && field.wire == kBytes) {  // status: its phase (1) is the server's
    MessageReader status(field.bytes, reader.OffsetOf(field));
    for (;;) {
      Result<std::optional<Field>> next = status.Next();
      if (!next) return next.error();
      if (!*next) return Status();
      if ((*next)->number != 1) return NotRead("NamespaceStatus", **next);
    }
  }
  return NotRead("Namespace", field);
}

Status ReadConfigMapField(const MessageReader& reader, const Field& field, Json& object) {
  if ((field.number == 2 || field.number == 3) && field.wire == kBytes) {
    Json& map = object[field.number == 2 ? "data" : "binaryData"];
    if (!map.is_object()) map = Json::object();
    return ReadMapEntry(reader, field, field.number == 3, map);
  }
  if (field.number == 4 && field.wire == kVarint) {
    object["immutable"] = field.varint != 0;
    return Status();
  }
  return NotRead("ConfigMap", field);
}

Status ReadSecretField(const MessageReader& reader, const Field& field, Json& object) {
  if ((field.number == 2 || field.number == 4) && field.wire == kBytes) {
    Json& map = object[field.number == 2 ? "data" : "stringData"];
    if (!map.is_object()) map = Json::object();
    return ReadMapEntry(reader, field, field.number == 2, map);
  }
  if (field.number == 3 && field.wire == kBytes) {
    if (!field.bytes.empty()) object["type"] = std::string(field.bytes);
    return Status();
  }
  if (field.number == 5 && field.wire == kVarint) {
    object["immutable"] = field.varint != 0;
    return Status();
  }
  return NotRead("Secret", field);
}

}  // namespace

Result<Json> KubeProtobufToJson(std::string_view body) {
  if (!body.starts_with(kMagic)) {
    return Err(InvalidArgumentError(
        "request body (protobuf): does not start with Kubernetes' \"k8s\\0\" magic"));
  }
  MessageReader unknown(body.substr(kMagic.size()), kMagic.size());
  std::string api_version;
  std::string kind;
  std::optional<Field> raw;
  for (;;) {
    ASSIGN_OR_RETURN(std::optional<Field> field, unknown.Next());
    if (!field) break;
    if (field->number == 1 && field->wire == kBytes) {  // TypeMeta
      MessageReader type_meta(field->bytes, unknown.OffsetOf(*field));
      for (;;) {
        ASSIGN_OR_RETURN(std::optional<Field> part, type_meta.Next());
        if (!part) break;
        ASSIGN_OR_RETURN(std::string_view text, BytesOf("TypeMeta", *part));
        if (part->number == 1) api_version = std::string(text);
        if (part->number == 2) kind = std::string(text);
      }
    } else if (field->number == 2 && field->wire == kBytes) {
      raw = field;
    } else if ((field->number == 3 || field->number == 4) && field->wire == kBytes) {
      if (!field->bytes.empty() && field->number == 3) {
        return Err(InvalidArgumentError("request body (protobuf): content encoding \"" +
                                        std::string(field->bytes) + "\" is not read"));
      }
    } else {
      return Err(NotRead("runtime.Unknown", *field));
    }
  }
  ReadKindField read_field = nullptr;
  if (api_version == "v1" && kind == "Namespace") read_field = ReadNamespaceField;
  if (api_version == "v1" && kind == "ConfigMap") read_field = ReadConfigMapField;
  if (api_version == "v1" && kind == "Secret") read_field = ReadSecretField;
  if (read_field == nullptr) {
    return Err(InvalidArgumentError(
        "request body (protobuf): strata reads v1 Namespace, ConfigMap and Secret in protobuf, "
        "not " +
        (kind.empty() ? std::string("an object without a kind") : api_version + " " + kind) +
        "; send it as JSON"));
  }
  Json object = {{"apiVersion", api_version}, {"kind", kind}, {"metadata", Json::object()}};
  if (!raw) return object;
  MessageReader reader(raw->bytes, unknown.OffsetOf(*raw));
  for (;;) {
    ASSIGN_OR_RETURN(std::optional<Field> field, reader.Next());
    if (!field) break;
    Status read = field->number == 1 && field->wire == kBytes
                      ? ReadObjectMeta(reader, *field, object["metadata"])
                      : read_field(reader, *field, object);
    if (!read.ok()) return Err(read);
  }
  return object;
}

}  // namespace strata::server
