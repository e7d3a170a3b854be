#pragma once

#include "api/field_schema.h"

namespace strata::api {

// The field tables of strata's native kinds and of the pieces compatible kinds share with them.
// Each returns a pointer to an immutable static.

const TypeSchema* ObjectMetaSchema();
const TypeSchema* ResourceRequestSchema();
const TypeSchema* GpuSelectorSchema();
const TypeSchema* EnvVarSchema();
// Kubernetes' env valueFrom and envFrom items (env_source.cc).
const TypeSchema* EnvVarSourceSchema();
const TypeSchema* EnvFromSourceSchema();
const TypeSchema* ProcessTemplateSchema();
const TypeSchema* SecurityContextSchema();
const TypeSchema* TolerationSchema();
const TypeSchema* AssignedGpuSchema();
const TypeSchema* TopologySchema();     // where a gang's pods must or should land together
const TypeSchema* ServiceSpecSchema();  // native_service_schema.cc

// The statuses strata's loops write (status_schema.cc).
const TypeSchema* JobStatusSchema();
const TypeSchema* ServiceStatusSchema();
const TypeSchema* QueueStatusSchema();

// Whole documents (apiVersion, kind, metadata, spec, status) of the native kinds.
const TypeSchema* NodeDocumentSchema();
const TypeSchema* QueueDocumentSchema();
const TypeSchema* ResourceFlavorDocumentSchema();
const TypeSchema* JobDocumentSchema();
const TypeSchema* ServiceDocumentSchema();
const TypeSchema* PodDocumentSchema();
const TypeSchema* TenantDocumentSchema();
const TypeSchema* WorkloadPriorityClassDocumentSchema();
const TypeSchema* NamespaceDocumentSchema();
const TypeSchema* EventDocumentSchema();
// Kubernetes' v1 ConfigMap and Secret (decode_config_data.cc).
const TypeSchema* ConfigMapDocumentSchema();
const TypeSchema* SecretDocumentSchema();

}  // namespace strata::api
