#include "distributed/launch_config.h"

#include <cstdlib>
#include <stdexcept>

namespace liftlab {

namespace {

int parse_int(const char* name, const std::string& text, int min_value) {
    size_t used = 0;
    int value = 0;
    try {
        value = std::stoi(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || value < min_value)
        throw std::invalid_argument(std::string(name) + " must be an integer ≥ " +
                                    std::to_string(min_value) + " (got '" + text + "')");
    return value;
}

void check_rank(const LaunchConfig& c, const char* rank_name) {
    if (c.rank >= c.world_size)
        throw std::invalid_argument(std::string(rank_name) + " = " + std::to_string(c.rank) +
                                    " is not below the world size " + std::to_string(c.world_size));
}

}  // namespace

void parse_master_address(const std::string& text, LaunchConfig& config) {
    const auto colon = text.rfind(':');
    const std::string host = colon == std::string::npos ? text : text.substr(0, colon);
    if (host.empty()) throw std::invalid_argument("master address has no host: '" + text + "'");
    config.master_addr = host;
    if (colon != std::string::npos)
        config.master_port = parse_int("master port", text.substr(colon + 1), 1);
    if (config.master_port > 65535)
        throw std::invalid_argument("master port must be below 65536 (got '" + text + "')");
}

std::string first_slurm_host(const std::string& nodelist) {
    // The first comma outside brackets ends the first group: "a[1-3],b" → "a[1-3]".
    const auto bracket = nodelist.find('[');
    const auto comma = nodelist.find(',');
    if (nodelist.empty() || nodelist.front() == ',' || nodelist.front() == '[')
        throw std::invalid_argument("SLURM_JOB_NODELIST is malformed: '" + nodelist + "'");
    if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket))
        return nodelist.substr(0, comma);
    const auto close = nodelist.find(']', bracket);
    if (close == std::string::npos)
        throw std::invalid_argument("SLURM_JOB_NODELIST is malformed: '" + nodelist + "'");
    // Inside the brackets: the first range or number, zero padding kept ("03-05" → "03").
    std::string first = nodelist.substr(bracket + 1, close - bracket - 1);
    first = first.substr(0, first.find_first_of(",-"));
    if (first.empty())
        throw std::invalid_argument("SLURM_JOB_NODELIST is malformed: '" + nodelist + "'");
    return nodelist.substr(0, bracket) + first;
}

std::optional<LaunchConfig> launch_config_from_environment(const EnvironmentLookup& getenv) {
    auto get = [&](const char* name) -> std::optional<std::string> {
        const char* v = getenv(name);
        if (!v || !*v) return std::nullopt;
        return std::string(v);
    };
    LaunchConfig c;
    if (auto port = get("MASTER_PORT")) c.master_port = parse_int("MASTER_PORT", *port, 1);
    const auto rank = get("RANK"), world = get("WORLD_SIZE");
    if (rank && world) {
        c.source = "torchrun";
        c.world_size = parse_int("WORLD_SIZE", *world, 1);
        c.rank = parse_int("RANK", *rank, 0);
        check_rank(c, "RANK");
        if (auto addr = get("MASTER_ADDR")) c.master_addr = *addr;
        return c;
    }
    const auto procid = get("SLURM_PROCID"), ntasks = get("SLURM_NTASKS");
    if (procid && ntasks && parse_int("SLURM_NTASKS", *ntasks, 1) > 1) {
        c.source = "slurm";
        c.world_size = parse_int("SLURM_NTASKS", *ntasks, 1);
        c.rank = parse_int("SLURM_PROCID", *procid, 0);
        check_rank(c, "SLURM_PROCID");
        if (auto addr = get("MASTER_ADDR")) {
            c.master_addr = *addr;
        } else if (auto nodes = get("SLURM_JOB_NODELIST")) {
            c.master_addr = first_slurm_host(*nodes);
        } else if (auto nodes = get("SLURM_NODELIST")) {
            c.master_addr = first_slurm_host(*nodes);
        } else {
            throw std::invalid_argument(
                "Slurm task without MASTER_ADDR or SLURM_JOB_NODELIST: cannot find rank 0");
        }
        return c;
    }
    return std::nullopt;
}

std::optional<LaunchConfig> launch_config_from_environment() {
    return launch_config_from_environment([](const char* n) { return std::getenv(n); });
}

}  // namespace liftlab
