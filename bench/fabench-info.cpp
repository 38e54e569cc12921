// fabench-info: this host's interconnect record (lib/sysinfo): RDMA devices and ports, PCIe
// links, NUMA, netdevs, RoCE congestion knobs, GPUs and their PCIe distance to each device, the
// software stack, and MLPerf's system-description fields. Text, or JSON with --json FILE.
// Reads sysfs only: no verbs calls, so it runs where a device is down or absent.
#include <stdio.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fabench/base/error.hpp"
#include "fabench/harness/cli.hpp"
#include "fabench/sysinfo/format.hpp"

namespace {

constexpr std::string_view kProg = "fabench-info";

struct Options {
  std::optional<std::string> json;  // none: text on stdout; "" or "-": JSON on stdout
  std::string root = "/";
};

constexpr const char* kDescription =
    "This host's interconnect record: RDMA devices and ports, PCIe links and NUMA nodes, netdevs, "
    "RoCE congestion knobs, GPUs and their PCIe distance to each device, the software stack and "
    "MLPerf's system-description fields.";

constexpr std::string_view kFooter =
    "Facts sysfs does not give are left out, never guessed. The same record, without GIDs,\n"
    "congestion knobs and CPU lists, is the \"interconnect\" key of every binary's JSON context.\n"
    "Where nvidia-smi is installed (and without --sysfs-root), its `topo -m` matrix is added.\n";

void add_options(CLI::App& app, Options& o) {
  app.add_option("--json", o.json, "The record as JSON instead of text, to FILE (no FILE or -: stdout)")
      ->expected(0, 1)
      ->type_name("[FILE]");
  app.add_option("--sysfs-root", o.root, "Read sys/, proc/, etc/ and var/lib/dpkg/ below DIR (default /)")
      ->type_name("DIR");
  app.footer(std::string(kFooter));
}

// `nvidia-smi topo -m` as it prints it, or "" where it is not installed or fails. Only here: the
// record itself (lib/sysinfo, also every report context's) reads files and runs no commands.
std::string nvidia_topology(const Options& o) {
  if (std::filesystem::path(o.root) != "/") return {};  // another host's tree: not this host's GPUs
  FILE* pipe = ::popen("nvidia-smi topo -m 2>/dev/null", "r");
  if (pipe == nullptr) return {};
  std::string out;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  return ::pclose(pipe) == 0 ? out : std::string();
}

void write_json(const Options& o, const fabench::sysinfo::Record& record, const std::string& topology) {
  auto doc = fabench::sysinfo::to_json(record);
  if (!topology.empty()) doc["nvidia_smi_topo"] = topology;
  const std::string text = fabench::sysinfo::dump(doc, 2) + "\n";
  if (o.json->empty() || *o.json == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(*o.json);
  if (!(out << text) || !out.flush()) throw fabench::RunError(fmt::format("--json {}: cannot write the file", *o.json));
}

int run(const Options& o) {
  std::error_code ec;
  if (!std::filesystem::is_directory(o.root, ec)) {
    throw fabench::UserError(fmt::format("--sysfs-root {}: not a directory", o.root));
  }
  const auto record = fabench::sysinfo::read_record(o.root);
  const std::string topology = nvidia_topology(o);
  if (!o.json) {
    std::cout << fabench::sysinfo::to_text(record) << (topology.empty() ? "" : "nvidia-smi topo -m:\n") << topology;
  } else {
    write_json(o, record, topology);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(kDescription, std::string(kProg));
  Options o;
  add_options(app, o);
  if (auto rc = fabench::harness::parse_command_line(app, argc, argv, kProg, "")) return *rc;
  return fabench::harness::run_main(kProg, [&] { return run(o); });
}
