#include "fabench/kv/hf_fields.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "fabench/kv/error.hpp"

namespace fabench::kv {

using nlohmann::json;

std::string hf_model_name(const HfFields& top, const HfFields& f, const std::filesystem::path& path) {
  if (auto n = top.text("_name_or_path"); n && !n->empty()) return *n;
  if (auto t = f.text("model_type"); t && !t->empty()) return *t;
  return path.stem().string();
}

json parse_hf_file(const std::filesystem::path& path, const std::string& file) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw KvError(fmt::format("{}: cannot open (no such file, or not readable)", file));
  std::ostringstream buf;
  buf << in.rdbuf();
  try {
    return json::parse(buf.str());
  } catch (const json::parse_error& e) {
    throw KvError(fmt::format("{}: not JSON (parse error at byte {})", file, e.byte));
  } catch (const json::out_of_range&) {  // 406: a number beyond a double ("1e400"), found by fuzz/kv_config
    throw KvError(fmt::format("{}: not JSON (a number out of range)", file));
  }
}

}  // namespace fabench::kv
