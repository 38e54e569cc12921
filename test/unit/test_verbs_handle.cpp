// verbs::Handle: the one owner of every verbs and rdma_cm object. A test type
// stands in for an ibv_* struct; its HandleTraits count the destroys.
#include <utility>

#include <catch2/catch.hpp>

#include "fabench/verbs/handle.hpp"

namespace {
struct FakeObject {
  int id = 0;
};
int g_destroyed = 0;
int g_last_id = 0;
}  // namespace

template <>
struct fabench::verbs::HandleTraits<FakeObject> {
  static void destroy(FakeObject* o) noexcept {
    ++g_destroyed;
    g_last_id = o->id;
  }
};

TEST_CASE("verbs::Handle destroys an owned object exactly once", "[verbs][handle]") {
  using fabench::verbs::Handle;
  g_destroyed = 0;
  FakeObject a{1};
  FakeObject b{2};
  SECTION("at the end of its scope") {
    { const Handle<FakeObject> h(&a); }
    CHECK(g_destroyed == 1);
    CHECK(g_last_id == 1);
  }
  SECTION("a move leaves the source empty: one destroy, by the target") {
    {
      Handle<FakeObject> h(&a);
      Handle<FakeObject> moved(std::move(h));
      CHECK(h.get() == nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
      CHECK(moved.get() == &a);
    }
    CHECK(g_destroyed == 1);
  }
  SECTION("move assignment destroys the object it replaces first") {
    Handle<FakeObject> h(&a);
    h = Handle<FakeObject>(&b);
    CHECK(g_destroyed == 1);
    CHECK(g_last_id == 1);
    h.reset();
    CHECK(g_destroyed == 2);
    CHECK(g_last_id == 2);
    h.reset();  // empty: nothing more
    CHECK(g_destroyed == 2);
  }
  SECTION("a borrowed object is never destroyed, also after a move") {
    {
      Handle<FakeObject> h(&a, false);
      CHECK_FALSE(h.owned());
      Handle<FakeObject> moved(std::move(h));
      CHECK_FALSE(moved.owned());
    }
    CHECK(g_destroyed == 0);
  }
}
