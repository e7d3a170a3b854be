#include "client/resource_tables.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "api/object_table.h"
#include "common/json_fields.h"

namespace strata::client {
namespace {

using Json = nlohmann::json;

// Cuts the last column's cells ("...") so that rows fit kTableWidth, keeping at least
// kMinLastColumn characters of it.
void ShortenLastColumn(const TableRow& header, std::vector<TableRow>& rows) {
  constexpr size_t kTableWidth = 80;
  constexpr size_t kMinLastColumn = 16;
  size_t before = 0;  // the width of every column but the last, with separators
  for (size_t column = 0; column + 1 < header.size(); ++column) {
    size_t width = header[column].size();
    for (const TableRow& row : rows) width = std::max(width, row[column].size());
    before += width + 3;
  }
  size_t room = std::max(kMinLastColumn, kTableWidth - std::min(kTableWidth, before));
  for (TableRow& row : rows) {
    std::string& last = row.back();
    if (last.size() > room) last = last.substr(0, room - 3) + "...";
  }
}

}  // namespace

std::string RenderColumns(const TableRow& header, const std::vector<TableRow>& rows) {
  std::vector<size_t> widths(header.size(), 0);
  auto measure = [&](const TableRow& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  };
  measure(header);
  for (const TableRow& row : rows) measure(row);
  std::string out;
  auto write = [&](const TableRow& row) {
    std::string line;
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 3, ' ');
    }
    out += line + "\n";
  };
  write(header);
  for (const TableRow& row : rows) write(row);
  return out;
}

std::string FormatTable(const api::ResourceType& type, const std::vector<Json>& items,
                        bool with_namespace, TimePoint now, const std::vector<Json>& pods,
                        bool header) {
  TableRow head;
  if (with_namespace) head.push_back("NAMESPACE");
  for (const api::TableColumn& column : api::TableColumns(type)) {
    std::string name = column.name;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::toupper(c); });
    head.push_back(std::move(name));
  }
  std::vector<TableRow> rows;
  for (const Json& item : items) {
    TableRow row = api::TableCells(type, item, now, pods);
    if (with_namespace) row.insert(row.begin(), TextAt(item, "/metadata/namespace", "-"));
    rows.push_back(std::move(row));
  }
  if (head.back() == "MESSAGE") ShortenLastColumn(head, rows);
  std::string table = RenderColumns(head, rows);
  return header ? table : table.substr(table.find('\n') + 1);
}

std::string FormatGpuHolders(const std::vector<Json>& nodes, const std::vector<Json>& pods) {
  // (node, GPU index) -> "namespace/pod", for pods that still hold their GPUs.
  std::map<std::pair<std::string, int64_t>, std::string> holders;
  for (const Json& pod : pods) {
    if (api::PodJsonTerminal(pod)) continue;
    std::string node = TextAt(pod, "/spec/nodeName");
    std::string holder = TextAt(pod, "/metadata/namespace") + "/" + TextAt(pod, "/metadata/name");
    for (const Json& gpu : FieldAt(pod, "/spec/assignedGpus")) {
      std::string& slot = holders[{node, gpu.value("index", int64_t{0})}];
      slot += (slot.empty() ? "" : ",") + holder;
    }
  }
  std::vector<TableRow> rows;
  for (const Json& node : nodes) {
    std::string name = TextAt(node, "/metadata/name");
    for (const Json& gpu : FieldAt(node, "/status/gpus")) {
      int64_t index = gpu.value("index", int64_t{0});
      auto it = holders.find({name, index});
      rows.push_back({name, std::to_string(index), gpu.value("model", "?"),
                      TextAt(gpu, "/memory", "-"), it == holders.end() ? "-" : it->second});
    }
  }
  return RenderColumns({"NODE", "GPU", "MODEL", "MEMORY", "HELD BY"}, rows);
}

}  // namespace strata::client
