#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_errors.h"
#include "api/field_reader.h"
#include "api/field_schema.h"
#include "api/object.h"

namespace strata::api {

// A Kueue LocalQueue read from a document: it becomes a LocalQueueRef on the Queue made from its
// ClusterQueue, which must be among the same manifests.
struct LocalQueueLink {
  std::string namespace_name;
  std::string name;
  std::string cluster_queue;
};

// A Volcano PodGroup read from a document: it becomes the gang (and queue, priority) of the
// pods among the same manifests that name it in the scheduling.k8s.io/group-name annotation.
struct PodGroupLink {
  std::string namespace_name;
  std::string name;
  int64_t min_member = 0;
  std::map<std::string, Quantity> min_resources;
  std::string queue;
  std::optional<int64_t> priority;
};

// What decoding one document produced: native objects (a compatible document may produce none,
// when it only links others), links resolved across documents afterwards, and errors.
struct DecodedDocument {
  std::vector<Object> objects;
  std::optional<LocalQueueLink> local_queue;
  std::optional<PodGroupLink> pod_group;
  FieldErrors errors;
};

// A kind strata reads: its apiVersion and kind, its field table and its decoder. The decoder
// receives a document that passed ValidateAgainstSchema(*schema()); it adds objects or errors.
struct KindInfo {
  std::string_view api_version;
  std::string_view kind;
  bool native = false;
  const TypeSchema* (*schema)() = nullptr;
  void (*decode)(const FieldView& document, DecodedDocument& out) = nullptr;
  std::string_view maps_to;  // for compatible kinds: what it becomes, for `explain`
};

// Every kind, native first. Immutable; thread-safe.
const std::vector<KindInfo>& AllKinds();

// The kind with this apiVersion and kind, or nullptr.
const KindInfo* FindKind(std::string_view api_version, std::string_view kind);

// Decoders, one per kind (native_decode.cc, decode_core_v1.cc, decode_kubeflow.cc,
// decode_kserve.cc, decode_kueue.cc, decode_volcano.cc).
void DecodeNativeNode(const FieldView& doc, DecodedDocument& out);
void DecodeNativeQueue(const FieldView& doc, DecodedDocument& out);
void DecodeNativeResourceFlavor(const FieldView& doc, DecodedDocument& out);
void DecodeNativeJob(const FieldView& doc, DecodedDocument& out);
void DecodeNativeService(const FieldView& doc, DecodedDocument& out);
void DecodeNativePod(const FieldView& doc, DecodedDocument& out);
void DecodeNativeTenant(const FieldView& doc, DecodedDocument& out);
void DecodeNativeEvent(const FieldView& doc, DecodedDocument& out);

}  // namespace strata::api
