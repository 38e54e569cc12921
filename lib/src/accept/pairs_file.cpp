// load_pairs: a --pairs text file -> pairs of node indexes, one-line errors naming file:line.
#include <charconv>
#include <fstream>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "detail.hpp"
#include "fabench/accept/error.hpp"
#include "fabench/accept/schedule.hpp"

namespace fabench::accept {

namespace {

std::vector<std::string> fields_of(std::string_view line) {
  line = line.substr(0, line.find('#'));
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
      ++i;
      continue;
    }
    const std::size_t end = line.find_first_of(" \t\r", i);
    out.emplace_back(line.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
    i = end == std::string_view::npos ? line.size() : end;
  }
  return out;
}

class NodeResolver {
 public:
  explicit NodeResolver(std::span<const std::string> names) : n_(static_cast<std::uint32_t>(names.size())) {
    for (std::uint32_t i = 0; i < n_; ++i) {
      if (!names[i].empty()) by_name_.emplace(names[i], i);
    }
  }

  // A node index in range, else a name of the list; nullopt when neither.
  [[nodiscard]] std::optional<std::uint32_t> resolve(const std::string& field) const {
    std::uint32_t index = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), index);
    if (ec == std::errc{} && end == field.data() + field.size() && index < n_) return index;
    const auto it = by_name_.find(field);
    if (it == by_name_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::uint32_t n_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
};

}  // namespace

std::vector<Pair> load_pairs(const std::filesystem::path& path, std::span<const std::string> node_names) {
  const std::string file = path.string();
  if (node_names.size() < 2 || node_names.size() > kMaxNodes) {
    throw AcceptError(fmt::format("{}: node count {} is outside 2..{}", file, node_names.size(), kMaxNodes));
  }
  std::ifstream in(path);
  if (!in) throw AcceptError(fmt::format("{}: cannot open (no such file, or not readable)", file));
  const NodeResolver nodes(node_names);
  std::unordered_map<std::uint64_t, std::size_t> first_line;
  std::vector<Pair> pairs;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const auto fields = fields_of(line);
    if (fields.empty()) continue;
    const auto where = fmt::format("{}:{}", file, number);
    if (fields.size() != 2) {
      throw AcceptError(fmt::format("{}: expected two nodes \"A B\" (got {} fields)", where, fields.size()));
    }
    Pair p;
    for (int k = 0; k < 2; ++k) {
      const auto node = nodes.resolve(fields[k]);
      if (!node) {
        throw AcceptError(fmt::format("{}: unknown node \"{}\" (a node index 0..{} or a node name)", where, fields[k],
                                      node_names.size() - 1));
      }
      (k == 0 ? p.a : p.b) = *node;
    }
    if (p.a == p.b) throw AcceptError(fmt::format("{}: self-pair {} {} (node {})", where, fields[0], fields[1], p.a));
    const auto [it, fresh] = first_line.emplace(detail::pair_key(p.a, p.b), number);
    if (!fresh) {
      throw AcceptError(
          fmt::format("{}: duplicate pair {} {} (first on line {})", where, fields[0], fields[1], it->second));
    }
    pairs.push_back(p);
  }
  if (in.bad()) throw AcceptError(fmt::format("{}: read error", file));
  if (pairs.empty()) throw AcceptError(fmt::format("{}: no pairs", file));
  return pairs;
}

}  // namespace fabench::accept
