// SPDX-License-Identifier: Apache-2.0
// The text ibnetdiscover prints (infiniband-diags): "Switch N "S-GUID" # "DESC" ..." blocks whose
// "[port] "H-GUID"[p](guid) # "HOST HCA-1" lid L 4xEDR" lines name the hosts cabled to the switch
// and whose "[port] "S-GUID"[p] # ..." lines the switches. Leaves are the switches with hosts;
// the others take their level from their distance to a leaf. A host is the first word of its
// HCA's description (what the node-name map or the HCA's node_desc says).
#pragma once

#include <istream>
#include <string>

#include "fabric/fabric_tree.hpp"

namespace fabricbench {

/// The tree of the switches reachable from a leaf (nodes not yet indexed: parse_fabric_tree does).
/// Links slower than most of their kind become findings. Throws UsageError naming the line.
FabricTree parse_ibnetdiscover(std::istream& text, const std::string& origin);

/// "4xEDR" -> 100 (ibstat's Rate, Gb/s); 0 when not a width and speed.
double infiniband_rate_gbps(const std::string& width_speed);

}  // namespace fabricbench
