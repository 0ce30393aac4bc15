// SPDX-License-Identifier: Apache-2.0
#include "collectives/nccl/nccl_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace fabricbench::nccl_path {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

/// The message of an INFO line ("host:pid:tid [dev] NCCL INFO message"), or the line itself when
/// it carries no prefix (lines pasted from elsewhere).
std::string_view message_of(std::string_view line) {
  const auto at = line.find("NCCL INFO ");
  return trim(at == std::string_view::npos ? line : line.substr(at + 10));
}

std::vector<std::string_view> split(std::string_view s, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto at = s.find(separator, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

/// "[0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>" -> devices, and the OOB part.
void parse_device_list(std::string_view list, std::vector<std::string>& devices, std::string& oob) {
  const auto semicolon = list.find(';');
  if (semicolon != std::string_view::npos) {
    const auto rest = trim(list.substr(semicolon + 1));
    if (starts_with(rest, "OOB ")) oob = std::string(trim(rest.substr(4)));
    list = list.substr(0, semicolon);
  }
  std::istringstream words{std::string(list)};
  std::string word;
  while (words >> word) {
    if (word.size() < 3 || word[0] != '[') continue;
    const auto close = word.find(']');
    if (close == std::string::npos || close + 1 >= word.size()) continue;  // "[RO]" and the like
    const std::string index = word.substr(1, close - 1);
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) continue;
    devices.push_back(word.substr(close + 1));
  }
}

std::string quoted(std::string_view s) {
  const auto open = s.find('\'');
  if (open == std::string_view::npos) return {};
  const auto close = s.find('\'', open + 1);
  return close == std::string_view::npos ? std::string() : std::string(s.substr(open + 1, close - open - 1));
}

/// "AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}"
bool parse_tuning(std::string_view m, TuningChoice& choice) {
  const auto colon = m.find(':');
  const auto arrow = m.find("Bytes -> Algo ");
  if (colon == std::string_view::npos || arrow == std::string_view::npos || arrow < colon) return false;
  choice.function = std::string(trim(m.substr(0, colon)));
  if (choice.function.empty() || choice.function.find(' ') != std::string::npos) return false;
  const std::string bytes(trim(m.substr(colon + 1, arrow - colon - 1)));
  if (bytes.empty() || bytes.find_first_not_of("0123456789") != std::string::npos) return false;
  choice.bytes = std::strtoull(bytes.c_str(), nullptr, 10);
  std::istringstream rest{std::string(m.substr(arrow + 14))};
  std::string proto_word;
  rest >> choice.algorithm >> proto_word >> choice.protocol;
  if (proto_word != "proto") return false;
  const auto braces = m.find("={");
  if (braces != std::string_view::npos) {
    const auto dots = m.find("..", braces);
    if (dots != std::string_view::npos) {
      const int low = std::atoi(std::string(m.substr(braces + 2, dots - braces - 2)).c_str());
      const int high = std::atoi(std::string(m.substr(dots + 2)).c_str());
      choice.channels = high >= low ? high - low + 1 : 0;
    }
  }
  return true;
}

std::string join(const std::set<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace

int severity(const std::string& word) { return word == "FAIL" ? 3 : word == "WARN" ? 2 : word == "OK" ? 1 : 0; }

std::string transport_family(std::string_view via) {
  via = trim(via);
  const auto parts = split(via, '/');
  if (parts.empty() || parts[0].empty()) return {};
  if (parts[0] == "NET" && parts.size() >= 2) {
    const bool gdr = std::find(parts.begin(), parts.end(), std::string_view("GDRDMA")) != parts.end();
    return fmt::format("NET/{}{}", parts[1], gdr ? "/GDRDMA" : "");
  }
  if (parts[0] == "P2P" && parts.size() >= 2) return fmt::format("P2P/{}", parts[1]);
  return std::string(parts[0]);
}

LogDigest digest_log(std::string_view text) {
  LogDigest d;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    const std::string_view m = message_of(line);
    if (m.empty()) continue;
    ++d.lines;
    if (starts_with(m, "NCCL version ")) {
      std::istringstream words{std::string(m.substr(13))};
      words >> d.nccl_version;
    } else if (starts_with(m, "Using network ")) {
      d.network = std::string(trim(m.substr(14)));
    } else if (starts_with(m, "NET/IB : Using ") || starts_with(m, "NET/IB: Using ")) {
      d.hcas.clear();
      parse_device_list(m.substr(m.find("Using ") + 6), d.hcas, d.socket_interfaces);
    } else if (starts_with(m, "NET/Socket : Using ") || starts_with(m, "NET/Socket: Using ")) {
      std::vector<std::string> interfaces;
      std::string unused;
      parse_device_list(m.substr(m.find("Using ") + 6), interfaces, unused);
      d.socket_interfaces.clear();
      for (const std::string& i : interfaces) d.socket_interfaces += (d.socket_interfaces.empty() ? "" : " ") + i;
    } else if (starts_with(m, "NET/IB") && m.find("GPU Direct RDMA Enabled for HCA") != std::string_view::npos) {
      d.gdr_enabled_hcas.insert(quoted(m));
    } else if (starts_with(m, "NET/IB") && m.find("GPU Direct RDMA Disabled for HCA") != std::string_view::npos) {
      d.gdr_disabled_hcas.insert(quoted(m));  // NET/Socket prints the same words about its interfaces: not HCAs
    } else if (starts_with(m, "Channel ") && m.find(" via ") != std::string_view::npos) {
      const std::string family = transport_family(m.substr(m.find(" via ") + 5));
      if (!family.empty()) ++d.transports[family];
    } else if (starts_with(m, "NCCL_") && m.find(" set by environment to ") != std::string_view::npos) {
      const auto at = m.find(" set by environment to ");
      std::string_view value = trim(m.substr(at + 23));
      // Integer settings are logged as "to 0.": the full stop ends NCCL's sentence, not the number.
      if (value.size() > 1 && value.back() == '.' && value.find_first_not_of("-0123456789") == value.size() - 1)
        value.remove_suffix(1);
      d.environment[std::string(m.substr(0, at))] = std::string(value);
    } else {
      TuningChoice choice;
      if (parse_tuning(m, choice)) d.tuning.push_back(choice);
    }
  }
  return d;
}

nlohmann::json to_json(const LogDigest& d) {
  nlohmann::json tuning = nlohmann::json::array();
  for (const TuningChoice& t : d.tuning)
    tuning.push_back({{"function", t.function},
                      {"bytes", t.bytes},
                      {"algorithm", t.algorithm},
                      {"protocol", t.protocol},
                      {"channels", t.channels}});
  return {{"nccl_version", d.nccl_version},
          {"network", d.network},
          {"hcas", d.hcas},
          {"gdr_enabled_hcas", d.gdr_enabled_hcas},
          {"gdr_disabled_hcas", d.gdr_disabled_hcas},
          {"socket_interfaces", d.socket_interfaces},
          {"transports", d.transports},
          {"environment", d.environment},
          {"tuning", tuning},
          {"lines", d.lines}};
}

LogDigest digest_from_json(const nlohmann::json& j) {
  LogDigest d;
  d.nccl_version = j.value("nccl_version", std::string());
  d.network = j.value("network", std::string());
  d.hcas = j.value("hcas", std::vector<std::string>{});
  d.gdr_enabled_hcas = j.value("gdr_enabled_hcas", std::set<std::string>{});
  d.gdr_disabled_hcas = j.value("gdr_disabled_hcas", std::set<std::string>{});
  d.socket_interfaces = j.value("socket_interfaces", std::string());
  d.transports = j.value("transports", std::map<std::string, int>{});
  d.environment = j.value("environment", std::map<std::string, std::string>{});
  d.lines = j.value("lines", std::size_t{0});
  for (const auto& t : j.value("tuning", nlohmann::json::array()))
    d.tuning.push_back({t.value("function", std::string()), t.value("bytes", std::uint64_t{0}),
                        t.value("algorithm", std::string()), t.value("protocol", std::string()),
                        t.value("channels", 0)});
  return d;
}

PathVerdict judge_path(const std::vector<LogDigest>& ranks, int hosts) {
  PathVerdict v;
  std::size_t lines = 0;
  std::set<std::string> transports, networks, gdr_hcas, no_gdr_hcas, hcas, sockets;
  for (const LogDigest& d : ranks) {
    lines += d.lines;
    for (const auto& [t, n] : d.transports) transports.insert(t);
    if (!d.network.empty()) networks.insert(d.network);
    gdr_hcas.insert(d.gdr_enabled_hcas.begin(), d.gdr_enabled_hcas.end());
    no_gdr_hcas.insert(d.gdr_disabled_hcas.begin(), d.gdr_disabled_hcas.end());
    for (const std::string& h : d.hcas) hcas.insert(h.substr(0, h.find(':')));
    if (!d.socket_interfaces.empty()) sockets.insert(d.socket_interfaces);
  }
  auto add = [&](const std::string& line, const std::string& word) {
    v.lines.push_back(fmt::format("{} - {}", line, word));
    if (severity(word) > severity(v.worst)) v.worst = word;
  };
  v.worst = "UNKNOWN";
  if (lines == 0) {
    v.lines.push_back("no NCCL log captured: the path cannot be judged (see the transport report's note)");
    return v;
  }
  auto has = [&](std::string_view prefix) {
    return std::any_of(transports.begin(), transports.end(),
                       [&](const std::string& t) { return starts_with(t, prefix); });
  };
  if (hosts > 1) {
    if (has("NET/Socket") || networks.count("Socket"))
      add(fmt::format("inter-node: NET/Socket on {} - IB not used (check ibstat: Active/LinkUp; NCCL_IB_HCA; "
                      "NCCL_SOCKET_IFNAME; the NET/IB lines of the log say why)",
                      sockets.empty() ? std::string("?") : join(sockets)),
          "FAIL");
    else if (has("NET/IB/GDRDMA"))
      add(fmt::format("inter-node: NET/IB + GDRDMA on {}", join(gdr_hcas.empty() ? hcas : gdr_hcas)), "OK");
    else if (has("NET/IB"))
      add(fmt::format("inter-node: NET/IB without GDRDMA on {} - GPU data is staged through host memory (load "
                      "nvidia-peermem or use dma-buf; check NCCL_NET_GDR_LEVEL)",
                      join(hcas)),
          "WARN");
    else if (has("NET/"))
      add(fmt::format("inter-node: {} via plugin '{}'",
                      *std::find_if(transports.begin(), transports.end(),
                                    [](const std::string& t) { return starts_with(t, "NET/"); }),
                      join(networks)),
          "OK");
    else
      add("inter-node: no NET connection logged (NCCL connects lazily: only the collectives that ran connected)",
          "WARN");
  } else if (has("NET/")) {
    add("intra-node traffic over the network (NET/*): GPUs of one node cannot use P2P or SHM (check NCCL_P2P_DISABLE, "
        "NCCL_SHM_DISABLE)",
        "WARN");
  }
  if (has("P2P/"))
    add(fmt::format("intra-node: {}", join([&] {
                      std::set<std::string> p2p;
                      for (const std::string& t : transports)
                        if (starts_with(t, "P2P/")) p2p.insert(t);
                      return p2p;
                    }())),
        "OK");
  else if (has("SHM"))
    add("intra-node: SHM only - GPUs cannot reach each other directly (NCCL_P2P_DISABLE? PCIe ACS? nvidia-smi topo -m)",
        "WARN");
  if (!no_gdr_hcas.empty())
    add(fmt::format("GPU Direct RDMA disabled for {} (the log says why: module not loaded, PCIe distance)",
                    join(no_gdr_hcas)),
        "WARN");
  if (transports.empty() && hosts <= 1)
    add(fmt::format("no connection between ranks logged ({} line(s)): a single rank needs none", lines), "OK");
  return v;
}

}  // namespace fabricbench::nccl_path
