#include "core/activity.h"

#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace liftlab {

namespace {

struct ActivityRegistry {
    std::mutex mutex;
    std::map<std::thread::id, std::vector<std::string>> stacks;  // per thread, innermost last
    std::function<void(const std::string&)> listener;
};

ActivityRegistry& activity_registry() {
    static ActivityRegistry* r = new ActivityRegistry;  // never destroyed: threads may outlive main
    return *r;
}

thread_local const std::atomic<bool>* t_stop_flag = nullptr;

}  // namespace

Activity::Activity(std::string what) {
    auto& r = activity_registry();
    std::function<void(const std::string&)> listener;
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        r.stacks[std::this_thread::get_id()].push_back(what);
        listener = r.listener;
    }
    if (listener && !what.empty()) listener(what);
}

Activity::~Activity() {
    auto& r = activity_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.stacks.find(std::this_thread::get_id());
    if (it == r.stacks.end()) return;
    it->second.pop_back();
    if (it->second.empty()) r.stacks.erase(it);
}

std::string current_activity() {
    auto& r = activity_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::string out;
    for (const auto& [thread, stack] : r.stacks) {
        // The innermost non-empty entry of this thread.
        for (auto it = stack.rbegin(); it != stack.rend(); ++it)
            if (!it->empty()) {
                if (out.find(*it) == std::string::npos) out += (out.empty() ? "" : "; ") + *it;
                break;
            }
    }
    return out;
}

void set_activity_listener(std::function<void(const std::string&)> listener) {
    auto& r = activity_registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.listener = std::move(listener);
}

StopScope::StopScope(const std::atomic<bool>* flag) : previous_(t_stop_flag) {
    t_stop_flag = flag;
}

StopScope::~StopScope() {
    t_stop_flag = previous_;
}

const std::atomic<bool>* current_stop_flag() {
    return t_stop_flag;
}

bool stop_requested() {
    return t_stop_flag && t_stop_flag->load(std::memory_order_relaxed);
}

}  // namespace liftlab
