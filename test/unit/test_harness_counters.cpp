// Port and hw counters read from a fake sysfs tree; deltas; classification and selection.
#include <catch2/catch.hpp>

#include <filesystem>

#include "fabench/harness/counters.hpp"
#include "temp_dir.hpp"

using namespace fabench::harness;
using fabench::test::TempDir;

namespace {

void put(const TempDir& tmp, const std::string& name, const std::string& text) {
  static_cast<void>(tmp.write(name, text));
}

// mlx5-like: IBA port counters, port hw_counters (one name shared with a port
// counter), a device-wide hw_counters directory, and files to skip.
std::filesystem::path fake_mlx5(const TempDir& tmp) {
  const std::filesystem::path dev = tmp.write("ib/mlx5_0/ports/1/counters/port_xmit_data", "1000\n").parent_path();
  put(tmp, "ib/mlx5_0/ports/1/counters/port_rcv_data", "2000\n");
  put(tmp, "ib/mlx5_0/ports/1/counters/port_xmit_packets", "10\n");
  put(tmp, "ib/mlx5_0/ports/1/counters/symbol_error", "0\n");
  put(tmp, "ib/mlx5_0/ports/1/counters/link_downed", "1\n");
  put(tmp, "ib/mlx5_0/ports/1/counters/port_xmit_wait", "18446744073709551615\n");  // max u64
  put(tmp, "ib/mlx5_0/ports/1/counters/unsupported", "N/A (no PMA)\n");
  put(tmp, "ib/mlx5_0/ports/1/counters/empty", "");
  put(tmp, "ib/mlx5_0/ports/1/counters/trailing", "12abc\n");
  put(tmp, "ib/mlx5_0/ports/1/counters/negative", "-3\n");
  put(tmp, "ib/mlx5_0/ports/1/counters/subdir/x", "5\n");  // a directory: skipped
  put(tmp, "ib/mlx5_0/ports/1/hw_counters/out_of_sequence", "7\n");
  put(tmp, "ib/mlx5_0/ports/1/hw_counters/np_cnp_sent", "3\n");
  put(tmp, "ib/mlx5_0/ports/1/hw_counters/link_downed", "2\n");   // collides with counters/link_downed
  put(tmp, "ib/mlx5_0/ports/1/hw_counters/lifespan", "10\n");     // a setting, not a counter
  put(tmp, "ib/mlx5_0/ports/2/counters/port_xmit_data", "99\n");  // another port: not read
  put(tmp, "ib/mlx5_0/hw_counters/dev_only", "4\n");
  put(tmp, "ib/mlx5_0/hw_counters/out_of_sequence", "8\n");            // taken by the port's hw counter
  put(tmp, "ib/mlx5_0/hw_counters/link_downed", "9\n");                // taken twice
  return dev.parent_path().parent_path().parent_path().parent_path();  // .../ib
}

}  // namespace

TEST_CASE("read_port_counters: every numeric file, named as the file is", "[harness][counters]") {
  TempDir tmp;
  const auto root = fake_mlx5(tmp);
  REQUIRE(root.filename() == "ib");
  const Counters c = read_port_counters("mlx5_0", 1, root);
  const Counters expected = {
      {"port_xmit_data", 1000},
      {"port_rcv_data", 2000},
      {"port_xmit_packets", 10},
      {"symbol_error", 0},
      {"link_downed", 1},
      {"port_xmit_wait", 18446744073709551615ULL},
      {"out_of_sequence", 7},
      {"np_cnp_sent", 3},
      {"hw_counters/link_downed", 2},
      {"dev_only", 4},
      {"hw_counters/out_of_sequence", 8},
      {"device/hw_counters/link_downed", 9},
  };
  CHECK(c == expected);
}

TEST_CASE("read_port_counters: missing device, port or directories give an empty map", "[harness][counters]") {
  TempDir tmp;
  const auto root = fake_mlx5(tmp);
  CHECK(read_port_counters("mlx5_9", 1, root).empty());
  CHECK(read_port_counters("", 1, root).empty());
  CHECK(read_port_counters("../ib", 1, root).empty());
  CHECK(read_port_counters("mlx5_0", 1, root / "nowhere").empty());
  // Port 3 has no directory; only the device-wide hw counters remain.
  const Counters dev_only = read_port_counters("mlx5_0", 3, root);
  CHECK(dev_only == Counters{{"dev_only", 4}, {"link_downed", 9}, {"out_of_sequence", 8}});
  CHECK(read_port_counters("mlx5_0", 2, root) ==
        Counters{{"port_xmit_data", 99}, {"dev_only", 4}, {"link_downed", 9}, {"out_of_sequence", 8}});
}

TEST_CASE("read_port_counters: rxe-like, hw_counters only", "[harness][counters]") {
  TempDir tmp;
  put(tmp, "ib/rxe0/ports/1/hw_counters/sent_pkts", "5\n");
  put(tmp, "ib/rxe0/ports/1/hw_counters/rcvd_pkts", "6\n");
  put(tmp, "ib/rxe0/ports/1/hw_counters/lifespan", "10\n");
  put(tmp, "ib/rxe0/ports/1/gids/0", "fe80:0000:0000:0000:0000:0000:0000:0001\n");
  CHECK(read_port_counters("rxe0", 1, tmp.write("x", "").parent_path() / "ib") ==
        Counters{{"rcvd_pkts", 6}, {"sent_pkts", 5}});
}

TEST_CASE("counter_deltas: after - before, zero dropped, negative kept", "[harness][counters]") {
  const Counters before = {{"a", 10}, {"b", 5}, {"c", 7}, {"gone", 1}, {"wrap", 18446744073709551610ULL}};
  const Counters after = {{"a", 25}, {"b", 5}, {"c", 3}, {"new", 4}, {"wrap", 4}};
  const auto d = counter_deltas(before, after);
  CHECK(d == std::map<std::string, std::int64_t>{{"a", 15}, {"c", -4}, {"wrap", 10}});
  CHECK(counter_deltas({}, after).empty());
  CHECK(counter_deltas(after, after).empty());
}

TEST_CASE("counter_kind: traffic, errors, congestion, the rest", "[harness][counters]") {
  for (const char* n :
       {"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets", "sent_pkts", "rcvd_pkts"}) {
    CHECK(counter_kind(n) == CounterKind::kTraffic);
  }
  for (const char* n : {"symbol_error", "link_downed", "hw_counters/link_downed", "port_xmit_wait", "port_rcv_errors",
                        "out_of_sequence", "out_of_seq_request", "duplicate_request", "completer_retry_err",
                        "local_ack_timeout_err", "roce_adp_retrans", "packet_seq_err", "port_xmit_discards",
                        "VL15_dropped", "rnr_nak_retry_err", "excessive_buffer_overrun_errors"}) {
    CHECK(counter_kind(n) == CounterKind::kError);
  }
  for (const char* n : {"np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets", "rp_cnp_ignored"}) {
    CHECK(counter_kind(n) == CounterKind::kCongestion);
  }
  for (const char* n : {"rdma_sends", "ack_deferred", "multicast_xmit_packets", "rx_write_requests", "interrupts"}) {
    CHECK(counter_kind(n) == CounterKind::kOther);
    CHECK_FALSE(in_default_set(n));
  }
}

TEST_CASE("counter_selected: default set, exact names, last components, perftest paths", "[harness][counters]") {
  CHECK(counter_selected("port_xmit_data", {}));
  CHECK(counter_selected("out_of_sequence", {}));
  CHECK_FALSE(counter_selected("rdma_sends", {}));
  const std::vector<std::string> w = {"rdma_sends", "counters/port_rcv_data", "hw_counters/out_of_sequence",
                                      "link_downed"};
  CHECK(counter_selected("rdma_sends", w));
  CHECK(counter_selected("port_rcv_data", w));
  CHECK(counter_selected("out_of_sequence", w));
  CHECK(counter_selected("hw_counters/out_of_sequence", w));
  CHECK(counter_selected("link_downed", w));
  CHECK(counter_selected("hw_counters/link_downed", w));  // last component
  CHECK_FALSE(counter_selected("port_xmit_data", w));
  CHECK_FALSE(counter_selected("sent_pkts", w));
}

TEST_CASE("split_counter_list: commas, spaces, empty entries", "[harness][counters]") {
  CHECK(split_counter_list("a,b, c") == std::vector<std::string>{"a", "b", "c"});
  CHECK(split_counter_list(",,a,,") == std::vector<std::string>{"a"});
  CHECK(split_counter_list("").empty());
}
