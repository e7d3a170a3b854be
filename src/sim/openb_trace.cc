#include "sim/openb_trace.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "fmt/format.h"

namespace strata::sim {
namespace {

// A CSV with a header, read row by row, that reports errors as "<source>:<line>: ...".
class CsvTable {
 public:
  static Result<CsvTable> Open(std::string_view csv, std::string_view source) {
    CsvTable table(csv, source);
    std::vector<std::string_view> header;
    if (!table.NextRow(header)) {
      return Err(
          InvalidArgumentError(fmt::format("{}: empty file, expected a header row", source)));
    }
    RETURN_IF_ERROR(table.CheckUnquoted(header));
    table.header_.assign(header.begin(), header.end());
    return table;
  }

  // The index of column `name`; InvalidArgument naming it when the header lacks it.
  Result<size_t> Column(std::string_view name) const {
    const auto it = std::find(header_.begin(), header_.end(), name);
    if (it == header_.end()) {
      return Err(InvalidArgumentError(
          fmt::format("{}:1: missing column '{}' in the header", source_, name)));
    }
    return static_cast<size_t>(it - header_.begin());
  }

  // Reads the next non-empty row into `fields`. Returns false at the end; an error when the row
  // has a different number of fields than the header or holds a quote.
  Result<bool> Next(std::vector<std::string_view>& fields) {
    if (!NextRow(fields)) return false;
    RETURN_IF_ERROR(CheckUnquoted(fields));
    if (fields.size() != header_.size()) {
      return Err(InvalidArgumentError(fmt::format("{}:{}: {} fields, the header has {}", source_,
                                                  line_, fields.size(), header_.size())));
    }
    return true;
  }

  // Parses field `column` of the current row as a non-negative integer.
  Result<int64_t> Integer(const std::vector<std::string_view>& fields, size_t column) const {
    const std::string_view text = fields[column];
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) {
      return Err(InvalidArgumentError(
          fmt::format("{}:{}: column '{}' (field {}): '{}' is not a non-negative integer", source_,
                      line_, header_[column], column + 1, text)));
    }
    return value;
  }

  int line() const { return line_; }
  std::string_view source() const { return source_; }

 private:
  CsvTable(std::string_view csv, std::string_view source) : rest_(csv), source_(source) {}

  bool NextRow(std::vector<std::string_view>& fields) {
    while (!rest_.empty()) {
      const size_t end = rest_.find('\n');
      std::string_view row = rest_.substr(0, end);
      rest_ = end == std::string_view::npos ? std::string_view() : rest_.substr(end + 1);
      ++line_;
      if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
      if (row.empty()) continue;
      fields.clear();
      size_t start = 0;
      while (true) {
        const size_t comma = row.find(',', start);
        fields.push_back(row.substr(start, comma - start));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      return true;
    }
    return false;
  }

  Status CheckUnquoted(const std::vector<std::string_view>& fields) const {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].find('"') != std::string_view::npos) {
        return InvalidArgumentError(
            fmt::format("{}:{}: field {}: quoted fields are not supported in openb traces", source_,
                        line_, i + 1));
      }
    }
    return Status::Ok();
  }

  std::string_view rest_;
  std::string source_;
  std::vector<std::string> header_;
  int line_ = 0;
};

std::vector<std::string> SplitGpuSpec(std::string_view spec) {
  std::vector<std::string> models;
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t bar = std::min(spec.find('|', start), spec.size());
    if (bar > start) models.emplace_back(spec.substr(start, bar - start));
    start = bar + 1;
  }
  return models;
}

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Err(NotFoundError(fmt::format("cannot read '{}'", path)));
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace

Result<std::vector<OpenbNode>> ParseOpenbNodes(std::string_view csv, std::string_view source) {
  ASSIGN_OR_RETURN(CsvTable table, CsvTable::Open(csv, source));
  ASSIGN_OR_RETURN(const size_t name, table.Column("sn"));
  ASSIGN_OR_RETURN(const size_t cpu, table.Column("cpu_milli"));
  ASSIGN_OR_RETURN(const size_t memory, table.Column("memory_mib"));
  ASSIGN_OR_RETURN(const size_t gpu, table.Column("gpu"));
  ASSIGN_OR_RETURN(const size_t model, table.Column("model"));
  std::vector<OpenbNode> nodes;
  std::vector<std::string_view> fields;
  while (true) {
    ASSIGN_OR_RETURN(const bool more, table.Next(fields));
    if (!more) break;
    OpenbNode node;
    node.name = fields[name];
    ASSIGN_OR_RETURN(node.cpu_milli, table.Integer(fields, cpu));
    ASSIGN_OR_RETURN(node.memory_mib, table.Integer(fields, memory));
    ASSIGN_OR_RETURN(const int64_t gpus, table.Integer(fields, gpu));
    if (gpus > 1024) {
      return Err(InvalidArgumentError(fmt::format(
          "{}:{}: column 'gpu': {} GPUs on one node is beyond 1024", source, table.line(), gpus)));
    }
    node.gpu_count = static_cast<int32_t>(gpus);
    node.gpu_model = fields[model];
    nodes.push_back(std::move(node));
  }
  return nodes;
}

Result<std::vector<OpenbPod>> ParseOpenbPods(std::string_view csv, std::string_view source) {
  ASSIGN_OR_RETURN(CsvTable table, CsvTable::Open(csv, source));
  ASSIGN_OR_RETURN(const size_t name, table.Column("name"));
  ASSIGN_OR_RETURN(const size_t cpu, table.Column("cpu_milli"));
  ASSIGN_OR_RETURN(const size_t memory, table.Column("memory_mib"));
  ASSIGN_OR_RETURN(const size_t num_gpu, table.Column("num_gpu"));
  ASSIGN_OR_RETURN(const size_t gpu_milli, table.Column("gpu_milli"));
  // Some published variants (multigpu20) have no gpu_spec column: then no pod names a model.
  const Result<size_t> gpu_spec = table.Column("gpu_spec");
  std::vector<OpenbPod> pods;
  std::vector<std::string_view> fields;
  while (true) {
    ASSIGN_OR_RETURN(const bool more, table.Next(fields));
    if (!more) break;
    OpenbPod pod;
    pod.name = fields[name];
    ASSIGN_OR_RETURN(pod.cpu_milli, table.Integer(fields, cpu));
    ASSIGN_OR_RETURN(pod.memory_mib, table.Integer(fields, memory));
    ASSIGN_OR_RETURN(const int64_t gpus, table.Integer(fields, num_gpu));
    ASSIGN_OR_RETURN(const int64_t milli, table.Integer(fields, gpu_milli));
    if (gpus > 1024) {
      return Err(InvalidArgumentError(
          fmt::format("{}:{}: column 'num_gpu': {} GPUs for one pod is beyond 1024", source,
                      table.line(), gpus)));
    }
    pod.gpu_count = static_cast<int32_t>(gpus);
    if (pod.gpu_count > 0) {
      pod.gpu_milli_each = static_cast<int32_t>(std::min<int64_t>(milli, 1000));
      if (gpu_spec) pod.allowed_gpu_models = SplitGpuSpec(fields[*gpu_spec]);
    }
    pods.push_back(std::move(pod));
  }
  return pods;
}

Result<std::vector<OpenbNode>> ReadOpenbNodes(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string contents, ReadWholeFile(path));
  return ParseOpenbNodes(contents, path);
}

Result<std::vector<OpenbPod>> ReadOpenbPods(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string contents, ReadWholeFile(path));
  return ParseOpenbPods(contents, path);
}

}  // namespace strata::sim
