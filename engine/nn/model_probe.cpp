#include "nn/model_probe.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/activity.h"
#include "core/child_process.h"
#include "core/errors.h"
#include "data/dataset.h"
#include "icnn/script_icnn.h"
#include "nn/torchscript_backbone.h"
#include "nn/torchscript_module.h"
#include "spec/experiment_spec.h"

namespace liftlab {

namespace {

constexpr const char* kProbeCommand = "probe-model";
constexpr const char* kProbeRequestFile = "request.json";
constexpr const char* kProbeInputsFile = "inputs.pt";
constexpr int64_t kProbeBatchRows = 4;  // as load_torchscript_backbone's probe
// The child's own alarm comes this long after the parent's limit (the parent ends it first).
constexpr double kProbeAlarmMarginSeconds = 5;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A number as the C locale writes it, at most `decimals` decimals, no trailing zeros ("60", "2.5").
std::string probe_number(double v, int decimals) {
    char buffer[64];
    const auto r =
        std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed, decimals);
    std::string s(buffer, r.ptr);
    if (s.find('.') != std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    return s;
}

// LibTorch's allocator ("can't allocate memory"), a std::bad_alloc, or errno ENOMEM.
bool says_out_of_memory(const std::string& text) {
    for (const char* sign :
         {"can't allocate memory", "bad_alloc", "Cannot allocate memory", "out of memory"})
        if (text.find(sign) != std::string::npos) return true;
    return false;
}

std::string first_text_line(const std::string& text) {
    const auto end = text.find('\n');
    return text.substr(0, end);
}

// The last non-empty line of the child's output (what it said before it died).
std::string last_text_line(const std::string& text) {
    std::istringstream lines(text);
    std::string line, last;
    while (std::getline(lines, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    return last;
}

// A private folder for one request, removed with it.
class ProbeRequestDir {
public:
    ProbeRequestDir() {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/liftlab-probe-XXXXXX";
        if (!::mkdtemp(pattern.data()))
            throw std::runtime_error("cannot create a folder for the model check in " + pattern +
                                     ": " + std::strerror(errno));
        path_ = pattern;
    }
    ~ProbeRequestDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

double resolved_memory_gib(const ModelProbeLimits& limits) {
    return limits.memory_gib > 0 ? limits.memory_gib : default_probe_memory_gib();
}

enum class ProbePhase { Start, Load, Forward };

ProbePhase phase_of(const std::string& activity) {
    if (activity.rfind(kTorchScriptLoadActivity, 0) == 0) return ProbePhase::Load;
    if (activity.rfind(kTorchScriptForwardActivity, 0) == 0) return ProbePhase::Forward;
    return ProbePhase::Start;
}

const char* phase_words(ProbePhase p) {
    switch (p) {
        case ProbePhase::Load:
            return "while loading it";
        case ProbePhase::Forward:
            return "in its probe forward pass";
        case ProbePhase::Start:
            break;
    }
    return "while it was being checked";
}

// Runs one request in a child and returns its answer ({"ok": true, …}); everything else becomes
// a SpecError on `key` naming `path` (or ModelProbeCancelled).
nlohmann::json run_probe_child(nlohmann::json request, const std::vector<torch::Tensor>& inputs,
                               const std::string& path, const std::string& key,
                               const ModelProbeLimits& limits, const std::atomic<bool>* stop) {
    // The reader's own checks first, here (no LibTorch code runs on the file in this process):
    // a missing, damaged or hostile archive needs no child to be refused.
    check_torchscript_archive(path, key);
    const Activity checking("checking " + path + " in a separate process");
    const double memory_gib = resolved_memory_gib(limits);
    ProbeRequestDir dir;
    request["path"] = path;
    request["key"] = key;
    request["timeout_seconds"] = limits.timeout_seconds + kProbeAlarmMarginSeconds;
    request["memory_bytes"] = static_cast<std::uint64_t>(memory_gib * kGiB);
    request["parent_pid"] = static_cast<long>(::getpid());
    {
        std::ofstream f(dir.path() + "/" + kProbeRequestFile, std::ios::binary);
        f << request.dump();
        if (!f) throw std::runtime_error("cannot write the model check's request in " + dir.path());
    }
    if (!inputs.empty()) torch::save(inputs, dir.path() + "/" + kProbeInputsFile);

    ChildOptions o;
    o.argv = {current_executable(), kProbeCommand, dir.path()};
    o.timeout_seconds = limits.timeout_seconds;
    o.stop = stop;
    const ChildOutcome c = run_child_process(o);
    if (c.end == ChildOutcome::End::Stopped) throw ModelProbeCancelled();

    // Its answer channel: one JSON object a line, {"phase": …} as it goes, {"ok": …} at the end.
    ProbePhase phase = ProbePhase::Start;
    nlohmann::json answer;
    std::istringstream lines(c.answer);
    for (std::string line; std::getline(lines, line);) {
        const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!j.is_object()) continue;
        if (j.contains("phase") && j["phase"].is_string())
            phase = std::max(phase, phase_of(j["phase"].get<std::string>()));
        if (j.contains("ok")) answer = j;
    }
    const std::string limit_text = probe_number(memory_gib, 1) + " GiB";
    auto out_of_memory = [&](const std::string& detail) {
        return SpecError(key, path + ": ran out of memory (limit " + limit_text +
                                  ", probe_memory_gib) " + phase_words(phase) +
                                  (detail.empty() ? "" : ": " + detail));
    };
    if (c.end == ChildOutcome::End::TimedOut) {
        const std::string within = " within " + probe_number(limits.timeout_seconds, 3) + " s";
        std::string what = "the check did not even start loading it" + within +
                           " (a LibTorch process takes a second or more to start on a busy "
                           "machine)";
        if (phase == ProbePhase::Forward) what = "forward did not return" + within;
        if (phase == ProbePhase::Load) what = "loading did not finish" + within;
        throw SpecError(key, path + ": " + what +
                                 " (probe_timeout_seconds; it ran in a separate process, which "
                                 "was stopped)");
    }
    if (answer.is_object() && answer.value("ok", false)) return answer;
    if (answer.is_object()) {
        const std::string message = answer.value("message", std::string("the check failed"));
        if (answer.value("memory", false)) {
            // "FILE: on a batch …: forward failed: DefaultCPUAllocator: …" → after the file name.
            std::string detail = message;
            if (detail.rfind(path + ": ", 0) == 0) detail = detail.substr(path.size() + 2);
            throw out_of_memory(detail);
        }
        throw SpecError(answer.value("key", key), message);
    }
    if (c.end == ChildOutcome::End::Signalled) {
        if (says_out_of_memory(c.log)) throw out_of_memory(last_text_line(c.log));
        if (c.signal == SIGKILL)
            throw SpecError(key, path + ": the process checking it was killed (SIGKILL) " +
                                     phase_words(phase) +
                                     ", perhaps by the system's out-of-memory killer");
        const std::string said = last_text_line(c.log);
        throw SpecError(key, path + ": LibTorch crashed on this file (" + signal_name(c.signal) +
                                 ") " + phase_words(phase) +
                                 (said.empty() ? "" : " (its last words: " + said + ")") +
                                 "; it ran in a separate process, nothing else is affected");
    }
    throw SpecError(key, path + ": the process checking it (" + o.argv[0] + " " + kProbeCommand +
                             ") ended with exit code " + std::to_string(c.exit_code) +
                             " and no answer" +
                             (c.log.empty() ? "" : ": " + last_text_line(c.log)));
}

// --- the child ---

// The child's answer channel: fd 3 when its parent opened it, else stdout (run by hand).
std::FILE* probe_answer_stream() {
    if (::fcntl(3, F_GETFD) != -1)
        if (std::FILE* f = ::fdopen(3, "w")) return f;
    return stdout;
}

void probe_say(std::FILE* out, const nlohmann::json& j) {
    const std::string line = j.dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), out);
    std::fflush(out);
}

std::string read_probe_file(const std::string& file) {
    std::ifstream f(file, std::ios::binary);
    if (!f) throw std::runtime_error("cannot read " + file);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

// Tests make the child crash as LibTorch would (LIFTLAB_TEST_PROBE_CRASH=SIGSEGV|SIGABRT|SIGBUS):
// the signal is raised when the child starts loading the file.
void probe_crash_hook(const std::string& activity) {
    const char* crash = std::getenv("LIFTLAB_TEST_PROBE_CRASH");
    if (!crash || phase_of(activity) != ProbePhase::Load) return;
    const std::string what = crash;
    if (what == "SIGSEGV") ::raise(SIGSEGV);
    if (what == "SIGABRT") ::raise(SIGABRT);
    if (what == "SIGBUS") ::raise(SIGBUS);
}

int probe_child_main(int argc, char** argv) {
    std::FILE* out = probe_answer_stream();
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s %s REQUEST_DIR (LiftLab starts it itself)\n", argv[0],
                     kProbeCommand);
        return 2;
    }
    const std::string dir = argv[2];
    std::string key = "backbone.script", path;
    try {
        const auto request = nlohmann::json::parse(read_probe_file(dir + "/" + kProbeRequestFile));
        key = request.at("key").get<std::string>();
        path = request.at("path").get<std::string>();
        const std::string problem = limit_this_process(
            request.at("memory_bytes").get<std::uint64_t>(),
            request.at("timeout_seconds").get<double>(), request.value("parent_pid", 0L));
        if (!problem.empty())
            std::fprintf(stderr, "model check: cannot limit %s\n", problem.c_str());
        torch::set_num_threads(1);  // four rows; no thread pool to start
        set_activity_listener([out](const std::string& what) {
            probe_say(out, {{"phase", what}});
            probe_crash_hook(what);
        });
        const std::string kind = request.at("kind").get<std::string>();
        if (kind == "inspect") {
            nlohmann::json params = nlohmann::json::array();
            for (const auto& p : inspect_torchscript(path, key))
                params.push_back({{"name", p.name}, {"shape", p.shape}});
            probe_say(out, {{"ok", true}, {"parameters", params}});
            return 0;
        }
        const ExperimentSpec spec = parse_spec(request.at("spec"));
        std::vector<torch::Tensor> inputs;
        torch::load(inputs, dir + "/" + kProbeInputsFile);
        if (kind == "backbone") {
            Dataset data;
            data.x_train = inputs.at(0);
            data.y_train = inputs.at(1);
            const auto b = load_torchscript_backbone(spec.backbone, data);
            probe_say(out,
                      {{"ok", true}, {"sha256", b->sha256()}, {"feature_dim", b->feature_dim()}});
            return 0;
        }
        if (kind == "icnn") {
            const auto& x = inputs.at(0);
            const auto icnn = TorchScriptIcnn::load(spec.icnn, x.size(1), x);
            probe_say(out, {{"ok", true}, {"sha256", icnn->sha256()}});
            return 0;
        }
        throw std::runtime_error("unknown request kind '" + kind + "'");
    } catch (const SpecError& e) {
        std::string message = e.what();
        const std::string prefix = "spec key '" + e.key() + "': ";
        if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
        probe_say(out, {{"ok", false},
                        {"key", e.key()},
                        {"message", message},
                        {"memory", says_out_of_memory(message)}});
    } catch (const std::bad_alloc&) {
        probe_say(out, {{"ok", false}, {"key", key}, {"message", path}, {"memory", true}});
    } catch (const std::exception& e) {
        const std::string what = first_text_line(e.what());
        probe_say(out, {{"ok", false},
                        {"key", key},
                        {"message", (path.empty() ? "" : path + ": ") + what},
                        {"memory", says_out_of_memory(what)}});
    }
    return 1;
}

}  // namespace

double default_probe_memory_gib() {
    const double ram = static_cast<double>(physical_memory_bytes()) / kGiB;
    if (ram <= 0) return 4;
    return std::max(2.0, std::floor(ram / 2));
}

ModelProbeLimits probe_limits(const ExperimentSpec& spec) {
    ModelProbeLimits l;
    l.timeout_seconds = spec.probe_timeout_seconds;
    l.memory_gib = spec.probe_memory_gib;
    return l;
}

std::string check_backbone_in_child(const ExperimentSpec& spec, const Dataset& data,
                                    const std::atomic<bool>* stop) {
    ExperimentSpec probe = spec;
    probe.backbone.init = "file";  // the check draws nothing from the generators
    const int64_t rows = std::min<int64_t>(kProbeBatchRows, data.n_train());
    const std::vector<torch::Tensor> inputs = {data.x_train.narrow(0, 0, rows).cpu().contiguous(),
                                               data.y_train.narrow(0, 0, rows).cpu().contiguous()};
    const auto answer =
        run_probe_child({{"kind", "backbone"}, {"spec", to_json(probe)}}, inputs,
                        spec.backbone.script, "backbone.script", probe_limits(spec), stop);
    return answer.at("sha256").get<std::string>();
}

std::string check_icnn_in_child(const ExperimentSpec& spec, const Dataset& data,
                                const std::atomic<bool>* stop) {
    const int64_t rows = std::min<int64_t>(kProbeBatchRows, data.n_train());
    const std::vector<torch::Tensor> inputs = {data.x_train.narrow(0, 0, rows).cpu().contiguous()};
    const auto answer = run_probe_child({{"kind", "icnn"}, {"spec", to_json(spec)}}, inputs,
                                        spec.icnn.script, "icnn.script", probe_limits(spec), stop);
    return answer.at("sha256").get<std::string>();
}

std::vector<TorchScriptParameterInfo> inspect_torchscript_in_child(const std::string& path,
                                                                   const std::string& key,
                                                                   const ModelProbeLimits& limits,
                                                                   const std::atomic<bool>* stop) {
    const auto answer = run_probe_child({{"kind", "inspect"}}, {}, path, key, limits, stop);
    std::vector<TorchScriptParameterInfo> out;
    for (const auto& p : answer.at("parameters"))
        out.push_back({p.at("name").get<std::string>(), p.at("shape").get<std::vector<int64_t>>()});
    return out;
}

std::optional<int> run_model_probe_if_asked(int argc, char** argv) {
    if (argc < 2 || std::strcmp(argv[1], kProbeCommand) != 0) return std::nullopt;
    return probe_child_main(argc, argv);
}

}  // namespace liftlab
