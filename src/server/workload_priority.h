#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"
#include "store/store.h"

namespace strata::server {

// Kueue's WorkloadPriorityClass for workloads written through the API. Kueue gives a workload
// the value of the class its kueue.x-k8s.io/priority-class label names when the workload is
// created (the class wins over its pods' own priority), and never again: a later change to the
// class, or its deletion, leaves the priority given alone. The server does the same with the
// WorkloadPriorityClasses it stores: a Job, Pod or Service written with the label gets the
// class's value as spec.priority, and the label stays, as on Kueue's Job.
//
// Where the class does not exist, Kueue creates no Workload for the job, which waits unadmitted
// (the kube scheduler here says "WorkloadPriorityClass x does not exist"). The embedded
// scheduler has no such state, so the write is refused instead, naming the label and the
// missing class: never admitted at a priority its owner did not ask for.
//
// Free function over the store it is given; as thread-safe as that store.

// Gives `write`, an object about to be stored over `current` (nullptr: created), the priority
// of the class its label names: `current`'s own when that carried the same label (given once,
// at creation), else the value of the class named in `in_request` (classes written in the same
// request body, by name) or stored. Objects of other kinds, or without the label, are left
// alone. Returns InvalidArgument naming the label when the class exists nowhere; a store error
// other than NotFound as it is.
Status GiveClassPriority(const store::Store& store, const store::Object* current,
                         const std::map<std::string, int64_t>& in_request, store::Object& write);

}  // namespace strata::server
