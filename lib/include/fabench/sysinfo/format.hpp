// The interconnect record (sysinfo/record.hpp) as JSON, as MLPerf's system-description fields
// and as text. One producer: fabench-info writes these, and every binary's report context
// carries the compact JSON under "interconnect" (harness/report.cpp).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "fabench/sysinfo/record.hpp"

namespace fabench::sysinfo {

enum class Form {
  kFull,     // everything read (fabench-info --json)
  kCompact,  // no GIDs, congestion knobs, CPU lists or software (a report context's one line)
};

// The record as JSON; an empty fact is left out, never written as "" or null.
[[nodiscard]] nlohmann::ordered_json to_json(const Record& record, Form form = Form::kFull);

// `json` as text (`indent` < 0: one line); bytes that are not UTF-8 (sysfs files are bytes)
// become U+FFFD instead of an exception.
[[nodiscard]] std::string dump(const nlohmann::ordered_json& json, int indent = -1);

// MLPerf's system-description fields, filled only from what the record has (a field whose facts
// are missing is left out): host_networking ("InfiniBand", "RoCE"), host_network_card_count
// (RDMA devices with an ACTIVE port), network_rate ("2x 400 Gb/sec (4X NDR)": the ACTIVE ports'
// rates) and accelerator_host_interconnect ("PCIe Gen5 x16": the GPUs' maximum link).
[[nodiscard]] nlohmann::ordered_json mlperf_fields(const Record& record);

// "PCIe Gen4" for "16.0 GT/s PCIe" (the generation of a transfer rate); "" for an unknown rate.
[[nodiscard]] std::string pcie_generation(const std::string& speed);

// The record as text, for a person: a block per device, per GPU, the software and MLPerf's fields.
[[nodiscard]] std::string to_text(const Record& record);

}  // namespace fabench::sysinfo
