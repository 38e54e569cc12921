// Writes the seed corpora of the fuzz targets, fuzz/corpus/<target>/, from
// real messages and command lines: fuzz_make_seeds fuzz/corpus. Seeds are
// committed; run this again only when a format changes.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fabench/ctrl/wire.hpp"
#include "fabench/pair/spec.hpp"

using namespace fabench;
using namespace fabench::ctrl;
using Bytes = std::vector<std::uint8_t>;
namespace fs = std::filesystem;

namespace {

fs::path g_root;

void put(const std::string& target, const std::string& name, const Bytes& b) {
  const fs::path dir = g_root / target;
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(b.data()),
                                                    static_cast<std::streamsize>(b.size()));
}
void put(const std::string& target, const std::string& name, const std::string& s) {
  put(target, name, Bytes(s.begin(), s.end()));
}
Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

fabench::Endpoint endpoint(std::uint32_t i) {
  fabench::Endpoint ep;
  ep.qpn = 0x100 + i;
  ep.psn = 0xABCDE;
  ep.qkey = 0x11111111;
  ep.mtu = 3;
  ep.gid_index = 1;
  ep.gid[10] = 0xFF;
  ep.gid[11] = 0xFF;
  ep.gid[12] = 10;
  ep.gid[15] = static_cast<std::uint8_t>(i);
  ep.addr = 0x7f0000000000ULL + i * 4096;
  ep.rkey = 0x1234 + i;
  ep.length = 65536;
  return ep;
}

std::vector<std::pair<std::string, Message>> messages() {
  pair::TestSpec bw = pair::TestSpec::defaults(pair::Kind::kBandwidth);
  bw.qps = 2;
  return {
      {"hello", Hello{kProtocolVersion, "0.1.0", "host-a", 1, 4}},
      {"hello_alone", Hello{kProtocolVersion, "0.1.0-g1234abc", "server.example.org", 0, 0}},
      {"hello_challenge", Hello{kProtocolVersion, "0.1.0", "host-a", 0, 0, Bytes(kTokenNonceBytes, 0x5A)}},
      {"endpoint_exchange", EndpointExchange{1, {endpoint(0), endpoint(1)}}},
      {"endpoint_exchange_empty", EndpointExchange{0, {}}},
      {"command_setup", Command{1, "setup", bw.to_params(), 0}},
      {"command_run", Command{2, "run", {{"spec", "0"}, {"algo", "ring"}}, 1000}},
      {"result_ok", Result{1, ResultStatus::kOk, "", R"({"p50_ns": 1234.5})",
                                 Record{}.set_f64("seconds", 1.5).set_u64("wrong", 0).set_list("times", {2.5e-6, 3e-6})}},
      {"result_failed", Result{2, ResultStatus::kFailed, "IBV_WC_RETRY_EXC_ERR", "", {}}},
      {"barrier", Barrier{3}},
      {"error", Error{"rank 3 (host-b) closed the connection"}},
      {"goodbye", Goodbye{}},
      {"gather", Gather{4, 1, {1, 0, 0, 0, 2, 0, 0, 0, 0xAA, 0xBB}}},
      {"keepalive", Keepalive{}},
      {"proof",
       Proof{{0x9b, 0x09, 0xff, 0xa7, 0x1b, 0x94, 0x2f, 0xcb, 0x27, 0x63, 0x5f, 0xbc, 0xd5, 0xb0, 0xe9, 0x44,
              0xbf, 0xdc, 0x63, 0x64, 0x4f, 0x07, 0x13, 0x93, 0x8a, 0x7f, 0x51, 0x53, 0x5c, 0x3a, 0x35, 0xe2}}},
  };
}

// Rank 0's side of a Bootstrap conversation with rank `rank` of `size`:
// the rendezvous, then one answer per collective in `ops` (ctrl_bootstrap.cpp).
Bytes bootstrap_stream(std::uint32_t size, std::uint32_t rank, const std::vector<int>& ops) {
  Bytes s = encode(Hello{kProtocolVersion, "0.1.0", "root", 0, size});
  for (std::uint32_t k = 0; k < size; ++k) {
    const std::string host = k == 0 ? "root" : "host-" + std::to_string(k);
    s = cat(s, encode(Gather{0, k, Bytes(host.begin(), host.end())}));
  }
  std::uint64_t epoch = 0;
  for (const int op : ops) {
    ++epoch;
    switch (op) {
      case 0: s = cat(s, encode(Barrier{epoch})); break;
      case 1:
        for (std::uint32_t k = 0; k < size; ++k) {
          s = cat(s, encode(Gather{epoch, k, {static_cast<std::uint8_t>(k), 0xAB, 0xCD}}));
        }
        break;
      case 2:
        for (std::uint32_t k = 0; k < size; ++k) s = cat(s, encode(EndpointExchange{k, {endpoint(k)}}));
        break;
      default: {
        // Routed pieces for us: [u32 source][u32 bytes][bytes] from every other rank.
        Bytes packed;
        for (std::uint32_t src = 0; src < size; ++src) {
          if (src == rank) continue;
          const Bytes piece(rank + 1, static_cast<std::uint8_t>(rank));
          for (std::uint32_t v : {src, static_cast<std::uint32_t>(piece.size())}) {
            for (int i = 0; i < 4; ++i) packed.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
          }
          packed = cat(packed, piece);
        }
        s = cat(s, encode(Gather{epoch, rank, packed}));
      }
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  g_root = argv[1];

  // Frames, and each type's payloads.
  for (const auto& [name, m] : messages()) {
    put("ctrl_frame", name, encode(m));
    std::string target = "ctrl_" + name.substr(0, name.find('_') == std::string::npos ? name.size() : name.find('_'));
    if (name.starts_with("endpoint_exchange")) target = "ctrl_endpoint_exchange";
    put(target, name, encode_payload(m));
  }
  put("ctrl_frame", "hello_v1", encode(Hello{1, "0.0.9", "old-host", 0, 0}, kMaxPayloadBytes, 1));
  const std::uint16_t newer = kProtocolVersion + 1;
  auto extended = encode(Hello{newer, "0.2.0", "new-host", 0, 0}, kMaxPayloadBytes, newer);
  extended.push_back(0x01);  // a field a newer version added
  extended[8] = static_cast<std::uint8_t>(extended.size() - kHeaderBytes);
  put("ctrl_frame", "hello_newer_extended", extended);
  put("ctrl_frame", "barrier_v1", encode(Barrier{1}, kMaxPayloadBytes, 1));
  {
    Bytes ep;
    append_endpoint(ep, endpoint(7));
    put("ctrl_endpoint_exchange", "endpoint_alone", ep);
  }

  // Channel streams: [options byte] then frames.
  const Bytes keepalive = encode(Keepalive{});
  put("ctrl_channel", "messages", cat(Bytes{20}, cat(keepalive, cat(encode(Barrier{1}), cat(keepalive,
      encode(Result{1, ResultStatus::kOk, "", "{}", Record{}.set_f64("seconds", 1.0)}))))));
  put("ctrl_channel", "handshake", cat(Bytes{0x80 | 20}, cat(encode(Hello{kProtocolVersion, "0.1.0", "peer", 1, 2}),
      encode(Command{1, "setup", pair::TestSpec::defaults(pair::Kind::kLatency).to_params(), 0}))));
  put("ctrl_channel", "handshake_refused", cat(Bytes{0x80 | 20}, encode(Error{"server busy"})));
  put("ctrl_channel", "handshake_token",
      cat(Bytes{0x80 | 20}, cat(encode(Hello{kProtocolVersion, "0.1.0", "peer", 1, 2, Bytes(kTokenNonceBytes, 1)}),
                                encode(Proof{}))));
  put("ctrl_channel", "small_limit", cat(Bytes{4}, encode(Error{"longer than sixteen bytes"})));
  put("ctrl_channel", "old_peer", cat(Bytes{0x80 | 20}, encode(Hello{1, "0.0.9", "old", 0, 0}, kMaxPayloadBytes, 1)));

  // Bootstrap: [size-2][rank-1][4 collectives] then rank 0's stream.
  const std::vector<std::vector<int>> plans{{0, 1, 2, 3}, {3, 3, 0, 1}, {2, 0, 3, 1}};
  for (std::uint32_t size : {2U, 3U, 5U}) {
    for (std::size_t p = 0; p < plans.size(); ++p) {
      const std::uint32_t rank = size - 1;
      Bytes in{static_cast<std::uint8_t>(size - 2), static_cast<std::uint8_t>(rank - 1)};
      for (int op : plans[p]) in.push_back(static_cast<std::uint8_t>(op));
      put("ctrl_bootstrap", "size" + std::to_string(size) + "_plan" + std::to_string(p),
          cat(in, bootstrap_stream(size, rank, plans[p])));
    }
  }
  put("ctrl_bootstrap", "refused", cat(Bytes{0, 0, 0, 0, 0, 0}, encode(Error{"two processes claim rank 1"})));

  // The session protocol on rank k: [size-2][rank-1], then rank 0's rendezvous and Commands.
  auto session = [](std::uint32_t size, const std::vector<Message>& msgs) {
    Bytes s{static_cast<std::uint8_t>(size - 2), static_cast<std::uint8_t>(size - 2)};
    s = cat(s, bootstrap_stream(size, size - 1, {}));
    for (const auto& m : msgs) s = cat(s, encode(m));
    return s;
  };
  const Command bye{9, "bye", {}, 0};
  const Command go{2, "go", {}, 0};
  put("world_follow", "run_go_bye",
      session(2, {Command{1, "run", {{"bench", "0"}, {"bytes", "1048576"}}, 100}, go, bye}));
  put("world_follow", "two_runs",
      session(3, {Command{1, "run", {{"bench", "1"}}, 10}, go, Command{3, "run", {{"bench", "2"}}, 20},
                  Command{4, "go", {}, 0}, bye}));
  put("world_follow", "run_fails", session(2, {Command{1, "run", {{"bench", "1"}}, 7}, go,
                                               Error{"rank 1 (host-1): odd iteration count"}}));
  put("world_follow", "prepare_fails",
      session(4, {Command{1, "run", {{"bench", "9"}}, 100}, Error{"rank 3: no benchmark 9"}}));
  // A go after a failed prepare once ran the unprepared job.
  put("world_follow", "go_after_failed_prepare", session(2, {Command{1, "run", {{"bench", "4"}}, 100}, go, bye}));
  put("world_follow", "no_bench", session(2, {Command{1, "run", {{"spec", "0"}}, 100}}));
  put("world_follow", "error_at_once", session(2, {Error{"rank 2 (host-2) closed the connection during barrier 1"}}));
  put("world_follow", "bye_at_once", session(2, {bye}));

  // Sizes, lists, numbers: [separator/range byte] then the text.
  const std::vector<std::string> texts{"2,64,4K,1M", "4G",         "512MiB",      "64k",   "7B",      "64,0",
                                       "17179869183G", "17179869184G", "18014398509481983K", "18446744073709551615",
                                       "18446744073709551616", "-42", "=255", "3.5", "4096", "allreduce,rhd,ring",
                                       "f32,bf16,f16", "sum", "alltoall,pairwise,allatonce", ""};
  for (std::size_t i = 0; i < texts.size(); ++i) {
    put("harness_lists", "text" + std::to_string(i), std::string(1, static_cast<char>(i * 17)) + texts[i]);
  }

  // The pair's setup Command, as followers get it.
  auto setup = [](const pair::TestSpec& s) { return encode_payload(Command{1, "setup", s.to_params(), 0}); };
  pair::TestSpec s = pair::TestSpec::defaults(pair::Kind::kLatency);
  put("pair_spec", "lat_default", setup(s));
  s.op = pair::Op::kFetchAdd;
  s.msg_bytes = 8;
  put("pair_spec", "lat_atomic", setup(s));
  s = pair::TestSpec::defaults(pair::Kind::kBandwidth);
  s.qps = 1024;
  s.post_list = 8;
  s.cq_mod = 16;
  s.bidirectional = true;
  put("pair_spec", "bw_qps", setup(s));
  s.op = pair::Op::kSend;
  s.transport = IBV_QPT_UD;
  s.msg_bytes = 1024;
  s.mtu_bytes = 4096;
  put("pair_spec", "bw_ud", setup(s));
  s = pair::TestSpec::defaults(pair::Kind::kBandwidth);
  s.msg_bytes = 4294967295ULL;
  put("pair_spec", "bw_largest_message", setup(s));
  // Regions of 4 GiB + 4 KiB times this many queue pairs wrap around 2^64 to just under 4 GiB.
  s.msg_bytes = 2147483648ULL;
  s.qps = 4294963201U;
  put("pair_spec", "bw_qps_wraps", setup(s));

  // Command lines, one argument per line.
  const std::vector<std::string> lines{
      "fabench-lat\n--loopback\n-d\nrxe0\n-s\n2,64,4K",
      "fabench-lat\n-d\nrxe0\n-x\n1\n--timeout\n5\n-n\n1000\n10.0.0.2",
      "fabench-lat\n--loopback\n--op\nall\n-c\nRC,UC,UD",
      "fabench-lat\n-A\nCMP_AND_SWAP\n-S\n3\n-T\n96",
      "fabench-lat\n--loopback\n-a\n-s\n64",
      "fabench-lat\n-e\n--op\nsend\n-m\n1024\n-I\n0",
      "fabench-bw\n-d\nrxe0\n-q\n4\n-b\n-l\n8\n-Q\n16\n-t\n64\n10.0.0.2",
      "fabench-bw\n--loopback\n-t\n16\n-Q\n200",
      "fabench-bw\n--bind\n0.0.0.0\n--once\n--max-mem\n1G\n-p\n18515\n--handshake-timeout\n2.5",
      "fabench-bw\n-a\n-c\nUD\n--op\nsend\n-D\n0.5",
      "fabench-bw\n-m\n3000",
      "fabench-bw\n--help",
      "fabench-lat\n-V",
  };
  for (std::size_t i = 0; i < lines.size(); ++i) put("pair_options", "argv" + std::to_string(i), lines[i]);
  const std::vector<std::string> coll_lines{
      "fabench-coll\n-b\n1K\n-e\n4M\n-f\n4",
      "fabench-coll\n-b\n8\n-e\n8G\n-f\n2\n-n\n100",
      "fabench-coll\n-s\n4K,1M,64M\n--coll\nallreduce,allgather,reducescatter,alltoall\n--algo\nring,rhd,oneshot,rd,auto"
      "\n--a2a-algo\npairwise,allatonce\n--dtype\nf32,bf16,f16\n--op\nmax",
      "fabench-coll\n-s\n1M\n-b\n1K",
      "fabench-coll\n-d\nrxe0,rxe1\n--rank\n0\n--world-size\n4\n--master-addr\n10.0.0.1\n--master-port\n29500"
      "\n--pipeline\n4\n--alpha-us\n5\n-D\n0.5",
      "fabench-coll\n--help",
      "fabench-coll\n-e\n5555555555555555555",  // the sweep by 4 from 1K passes 2^64: it once never ended
  };
  for (std::size_t i = 0; i < coll_lines.size(); ++i) put("coll_options", "argv" + std::to_string(i), coll_lines[i]);

  // Hugging Face config.json files, as load_hf_config() reads them (fields trimmed to what it reads and a few more).
  put("kv_config", "llama-3.1-70b.json",
      R"({"_name_or_path": "meta-llama/Llama-3.1-70B", "architectures": ["LlamaForCausalLM"], "hidden_size": 8192,
 "model_type": "llama", "num_attention_heads": 64, "num_hidden_layers": 80, "num_key_value_heads": 8,
 "rope_scaling": {"factor": 8.0, "rope_type": "llama3"}, "torch_dtype": "bfloat16", "vocab_size": 128256})");
  put("kv_config", "deepseek-r1.json",
      R"({"model_type": "deepseek_v3", "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
 "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "hidden_size": 7168,
 "torch_dtype": "float8_e4m3fn", "quantization_config": {"fmt": "e4m3", "weight_block_size": [128, 128]}})");
  put("kv_config", "qwen3-8b.json",
      R"({"model_type": "qwen3", "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 32,
 "num_hidden_layers": 36, "num_key_value_heads": 8, "dtype": "bfloat16", "sliding_window": null})");
  put("kv_config", "multimodal.json",
      R"({"model_type": "llava", "torch_dtype": "float16", "vision_config": {"hidden_size": 1024},
 "text_config": {"model_type": "mistral", "num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096,
 "num_key_value_heads": 8}})");
  put("kv_config", "bad_heads.json", R"({"num_hidden_layers": 2, "num_attention_heads": 3, "hidden_size": 1000})");
  put("kv_config", "not_json.json", "{\"num_hidden_layers\": 80,");
  put("kv_config", "huge_shape.json",
      R"({"num_hidden_layers": 4294967295, "num_key_value_heads": 4294967295, "head_dim": 4294967295})");
  put("kv_config", "mla_wide.json", R"({"num_hidden_layers": 1, "kv_lora_rank": 4294967295, "qk_rope_head_dim": 1})");
  put("kv_config", "number_overflow.json", R"({"num_hidden_layers": 1e400})");
  return 0;
}
