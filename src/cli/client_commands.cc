// `strata get`, `describe`, `delete` and `top`: the friendly face of the REST API. Every verb
// talks to --server (default $STRATA_SERVER, else http://127.0.0.1:7070) with --token (default
// $STRATA_TOKEN). Exit codes: 0 success, 1 an error from the server (or none reachable),
// 2 usage (an unknown kind, a missing name).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "api/object_table.h"
#include "api/resource_catalog.h"
#include "cli/client_flags.h"
#include "cli/command_registry.h"
#include "client/api_client.h"
#include "client/resource_description.h"
#include "client/resource_tables.h"
#include "common/yaml_json.h"
#include "observe/gpu_top.h"

namespace strata::cli {
namespace {

using Json = nlohmann::json;

// Prints the error and sets the exit code: 1 for the server's answer, 2 for usage.
const api::ResourceType* ResolveKind(const std::string& name) {
  const api::ResourceType* type = api::FindResourceType(name);
  if (type == nullptr) {
    std::string known;
    for (const api::ResourceType& t : api::AllResourceTypes()) {
      known += (known.empty() ? "" : ", ") + std::string(t.plural);
    }
    Fail(InvalidArgumentError("unknown kind \"" + name + "\" (known: " + known + ")"), 2);
  }
  return type;
}

std::string CollectionPath(const api::ResourceType& type, const ClientFlags& flags) {
  return type.Path(type.namespaced && !flags.all_namespaces ? flags.namespace_name : "", "");
}

Result<std::vector<Json>> ListItems(client::ApiClient& client, const std::string& path) {
  ASSIGN_OR_RETURN(Json list, client.Get(path));
  return list.value("items", Json::array()).get<std::vector<Json>>();
}

void PrintObjects(const std::vector<Json>& items, const std::string& output, bool single) {
  if (output == "json") {
    std::cout << (single ? items.front()
                         : Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}})
                     .dump(2)
              << "\n";
    return;
  }
  for (size_t i = 0; i < items.size(); ++i) std::cout << (i > 0 ? "---\n" : "") << ToYaml(items[i]);
}

struct GetOptions {
  ClientFlags flags;
  std::string kind;
  std::string name;
  std::string output;
  std::string selector;
  bool watch = false;
};

// The pods a table reads (TableReadsPods; none for the others): those of the namespace a
// namespaced kind is listed in, else every pod (which a token scoped to namespaces may not
// list).
Result<std::vector<Json>> PodsForTable(client::ApiClient& client, const api::ResourceType& type,
                                       const ClientFlags& flags) {
  if (!api::TableReadsPods(type)) return std::vector<Json>();
  const bool one_namespace = type.namespaced && !flags.all_namespaces;
  return ListItems(client, api::FindResourceTypeByKind("Pod")->Path(
                               one_namespace ? flags.namespace_name : "", ""));
}

void RunGet(const GetOptions& options) {
  const api::ResourceType* type = ResolveKind(options.kind);
  if (type == nullptr) return;
  auto client = Connect(options.flags);
  if (client == nullptr) return;
  bool with_namespace = type->namespaced && options.flags.all_namespaces;
  std::string query = options.selector.empty() ? "" : "labelSelector=" + options.selector;
  if (!options.name.empty()) {
    query += std::string(query.empty() ? "" : "&") + "fieldSelector=metadata.name=" + options.name;
  }
  std::string path = CollectionPath(*type, options.flags);
  auto print = [&](const std::vector<Json>& items, bool header) -> Status {
    if (!options.output.empty()) {
      PrintObjects(items, options.output, !options.name.empty() && items.size() == 1);
      return Status::Ok();
    }
    Result<std::vector<Json>> pods = PodsForTable(*client, *type, options.flags);
    if (!pods) return pods.error();
    std::cout << client::FormatTable(*type, items, with_namespace, RealClock::Instance().Now(),
                                     *pods, header)
              << std::flush;
    return Status::Ok();
  };
  if (options.watch) {
    bool first = true;
    Status printed;
    // A connection of its own for the stream; `client` reads the pods a row needs meanwhile.
    auto watcher = Connect(options.flags);
    if (watcher == nullptr) return;
    // Bookmarks keep a quiet stream alive past the client's idle timeout.
    Status status = watcher->Watch(
        path + "?watch=1&allowWatchBookmarks=true" + (query.empty() ? "" : "&" + query),
        [&](const Json& event) {
          if (event.value("type", "") == "BOOKMARK") return true;
          printed = print({event["object"]}, first);
          first = false;
          return printed.ok();
        });
    if (!printed.ok()) return Fail(printed);
    if (!status.ok()) Fail(status);
    return;
  }
  auto items = ListItems(*client, path + (query.empty() ? "" : "?" + query));
  if (!items) return Fail(items.error());
  if (!options.name.empty() && items->empty()) {
    return Fail(NotFoundError(std::string(type->singular) + " \"" + options.name + "\" not found"));
  }
  if (items->empty() && options.output.empty()) {
    std::cerr << "No " << type->plural << " found"
              << (type->namespaced && !options.flags.all_namespaces
                      ? " in namespace " + options.flags.namespace_name
                      : "")
              << ".\n";
    return;
  }
  if (Status printed = print(*items, true); !printed.ok()) Fail(printed);
}

struct NamedOptions {
  ClientFlags flags;
  std::string kind;
  std::string name;
};

// Pods related to an object: those on a node, those a job or service owns.
Result<std::vector<Json>> RelatedPods(client::ApiClient& client, const api::ResourceType& type,
                                      const Json& object) {
  if (type.kind != "Node" && type.kind != "Job" && type.kind != "Service") {
    return std::vector<Json>();
  }
  const api::ResourceType& pods = *api::FindResourceTypeByKind("Pod");
  std::string name = object["metadata"].value("name", "");
  std::string namespace_name = object["metadata"].value("namespace", "");
  ASSIGN_OR_RETURN(std::vector<Json> all, ListItems(client, pods.Path(namespace_name, "")));
  std::vector<Json> related;
  for (Json& pod : all) {
    bool match = type.kind == "Node" ? pod["spec"].value("nodeName", "") == name
                                     : api::PodOwnedBy(pod, object, type.kind);
    if (match) related.push_back(std::move(pod));
  }
  return related;
}

void RunDescribe(const NamedOptions& options) {
  const api::ResourceType* type = ResolveKind(options.kind);
  if (type == nullptr) return;
  auto client = Connect(options.flags);
  if (client == nullptr) return;
  std::string namespace_name = type->namespaced ? options.flags.namespace_name : "";
  auto object = client->Get(type->Path(namespace_name, options.name));
  if (!object) return Fail(object.error());
  auto pods = RelatedPods(*client, *type, *object);
  if (!pods) return Fail(pods.error());
  const api::ResourceType& events_type = *api::FindResourceTypeByKind("Event");
  auto all_events = ListItems(*client, events_type.Path(namespace_name, ""));
  if (!all_events) return Fail(all_events.error());
  std::vector<Json> events;
  for (Json& event : *all_events) {
    const Json& involved = event.value("involvedObject", Json::object());
    if (involved.value("kind", "") == type->kind && involved.value("name", "") == options.name) {
      events.push_back(std::move(event));
    }
  }
  std::cout << client::FormatDescription(*type, *object, *pods, events,
                                         RealClock::Instance().Now());
}

void RunDelete(const NamedOptions& options) {
  const api::ResourceType* type = ResolveKind(options.kind);
  if (type == nullptr) return;
  auto client = Connect(options.flags);
  if (client == nullptr) return;
  std::string namespace_name = type->namespaced ? options.flags.namespace_name : "";
  auto deleted = client->Call("DELETE", type->Path(namespace_name, options.name));
  if (!deleted) return Fail(deleted.error());
  std::cout << std::string(type->singular) << (type->group.empty() ? "" : ".") << type->group << "/"
            << options.name << " deleted\n";
}

void RunTopNodes(const ClientFlags& flags) {
  auto client = Connect(flags);
  if (client == nullptr) return;
  auto nodes = ListItems(*client, api::FindResourceTypeByKind("Node")->Path("", ""));
  if (!nodes) return Fail(nodes.error());
  auto pods = ListItems(*client, api::FindResourceTypeByKind("Pod")->Path("", ""));
  if (!pods) return Fail(pods.error());
  // Measured GPUs' utilisation as /metrics reports it; simulated GPUs derive theirs from
  // their holders, the same way the control plane does.
  auto page = client->GetText("/metrics");
  if (!page) return Fail(page.error());
  auto measured = observe::UtilisationFromMetrics(*page);
  if (!measured) return Fail(measured.error());
  observe::ClusterObjects cluster = observe::DecodeClusterObjects(*nodes, *pods);
  std::cout << client::RenderColumns(
      observe::GpuTopHeader(), observe::GpuTopRows(observe::ClusterGpuSamples(cluster, *measured)));
}

}  // namespace

STRATA_REGISTER_COMMANDS("client", [](CLI::App& app) {
  auto get = std::make_shared<GetOptions>();
  CLI::App* get_command = app.add_subcommand(
      "get", "List objects of a kind (nodes, queues, jobs, pods, services, events), or one");
  get_command->add_option("kind", get->kind, "nodes, queues, jobs, pods, services, events, ...")
      ->required();
  get_command->add_option("name", get->name, "One object's name");
  get_command->add_option("-o,--output", get->output, "json or yaml instead of a table")
      ->check(CLI::IsMember({"json", "yaml"}));
  get_command->add_option("-l,--selector", get->selector, "Label selector, e.g. team=a");
  get_command->add_flag("-w,--watch", get->watch, "Print changes as they happen");
  get_command->add_flag("-A,--all-namespaces", get->flags.all_namespaces, "Every namespace");
  AddClientFlags(get_command, get->flags, true);
  get_command->callback([get] { RunGet(*get); });

  auto describe = std::make_shared<NamedOptions>();
  CLI::App* describe_command = app.add_subcommand(
      "describe", "Show one object with its pods, its events and why it is pending");
  describe_command->add_option("kind", describe->kind, "node, queue, job, pod, ...")->required();
  describe_command->add_option("name", describe->name, "The object's name")->required();
  AddClientFlags(describe_command, describe->flags, true);
  describe_command->callback([describe] { RunDescribe(*describe); });

  auto remove = std::make_shared<NamedOptions>();
  CLI::App* delete_command = app.add_subcommand("delete", "Delete one object");
  delete_command->add_option("kind", remove->kind, "node, queue, job, pod, ...")->required();
  delete_command->add_option("name", remove->name, "The object's name")->required();
  AddClientFlags(delete_command, remove->flags, true);
  delete_command->callback([remove] { RunDelete(*remove); });

  auto top = std::make_shared<ClientFlags>();
  CLI::App* top_command = app.add_subcommand("top", "Show resource use");
  CLI::App* top_nodes = top_command->add_subcommand(
      "nodes", "Each GPU: the pods holding it, the share allocated and the share busy");
  top_command->require_subcommand(1);
  AddClientFlags(top_nodes, *top, false);
  top_nodes->callback([top] { RunTopNodes(*top); });
});

}  // namespace strata::cli
