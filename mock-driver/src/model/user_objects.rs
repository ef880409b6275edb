//! Graph user objects (cuUserObjectCreate, cuUserObjectRetain/Release,
//! cuGraphRetainUserObject/ReleaseUserObject): a program's object with a destructor and
//! a reference count, whose references graphs and executable graphs hold, so that what a
//! graph's work needs (kernel arguments, buffers) lives as long as that work can run.
//!
//! References are counted per holder: the program's own (what it created and retained),
//! and each graph's and executable graph's (`owners`). An executable graph holds the
//! references its graph held when instantiated, a clone its original's. When the count
//! reaches zero the destructor runs on a thread of its own after every stream's queued
//! work (cuda.h: it runs asynchronously and must not call CUDA; launches made before the
//! last release may still use the object).

use super::error::*;
use super::ids::{ExecId, GraphId, UserObjectId};
use std::collections::HashMap;

const USER_OBJECT_TAG: u64 = 0x0016_0000_0000_0000;

/// cuda.h's CU_USER_OBJECT_NO_DESTRUCTOR_SYNC, the only flag cuUserObjectCreate takes.
pub const NO_DESTRUCTOR_SYNC: u32 = 1;
/// cuda.h's CU_GRAPH_USER_OBJECT_MOVE: the caller's references pass to the graph.
pub const GRAPH_USER_OBJECT_MOVE: u32 = 1;

/// The program's destructor, called with its pointer (made by the C boundary).
pub type Destructor = Box<dyn FnOnce() + Send>;

struct UserObject {
    refs: u64,
    destroy: Destructor,
}

/// What holds references besides the program: a graph or an executable graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Holder {
    Graph(GraphId),
    Exec(ExecId),
}

impl From<GraphId> for Holder {
    fn from(g: GraphId) -> Self {
        Holder::Graph(g)
    }
}

impl From<ExecId> for Holder {
    fn from(e: ExecId) -> Self {
        Holder::Exec(e)
    }
}

#[derive(Default)]
pub struct UserObjects {
    objects: HashMap<UserObjectId, UserObject>,
    /// References held by graphs and executable graphs, by holder.
    owners: HashMap<Holder, HashMap<UserObjectId, u64>>,
    next: u64,
}

impl UserObjects {
    pub fn create(&mut self, destroy: Destructor, refs: u32, flags: u32) -> CuResult<UserObjectId> {
        if flags != NO_DESTRUCTOR_SYNC {
            return Err(invalid(format!(
                "flags {flags:#x}: cuUserObjectCreate takes CU_USER_OBJECT_NO_DESTRUCTOR_SYNC (1)"
            )));
        }
        if refs == 0 {
            return Err(invalid(
                "initialRefcount is 0: the object would be dead at birth",
            ));
        }
        self.next += 1;
        let id = UserObjectId::from_handle(USER_OBJECT_TAG | self.next);
        self.objects.insert(
            id,
            UserObject {
                refs: u64::from(refs),
                destroy,
            },
        );
        Ok(id)
    }

    fn object(&mut self, o: UserObjectId) -> CuResult<&mut UserObject> {
        self.objects
            .get_mut(&o)
            .ok_or_else(|| invalid(format!("{o:#x} is not a live user object")))
    }

    pub fn retain(&mut self, o: UserObjectId, count: u32) -> CuResult<()> {
        if count == 0 {
            return Err(invalid("count is 0"));
        }
        let obj = self.object(o)?;
        obj.refs = obj.refs.saturating_add(u64::from(count));
        Ok(())
    }

    /// cuUserObjectRelease: the program gives back `count` of its own references (those
    /// not held by a graph); the destructor, when the last goes, for the caller to run
    /// (`run_destructors`) outside the state's lock.
    pub fn release(&mut self, o: UserObjectId, count: u32) -> CuResult<Option<Destructor>> {
        if count == 0 {
            return Err(invalid("count is 0"));
        }
        let held: u64 = self.owners.values().filter_map(|h| h.get(&o)).sum();
        let own = self.object(o)?.refs - held;
        if u64::from(count) > own {
            return Err(invalid(format!(
                "releasing {count} references of user object {o:#x}, of which the program holds {own}"
            )));
        }
        Ok(self.drop_refs(o, u64::from(count)))
    }

    fn drop_refs(&mut self, o: UserObjectId, count: u64) -> Option<Destructor> {
        let obj = self.objects.get_mut(&o)?;
        obj.refs -= count.min(obj.refs);
        (obj.refs == 0).then(|| self.objects.remove(&o).expect("present").destroy)
    }

    /// cuGraphRetainUserObject: `holder` takes `count` references, the program's own
    /// with CU_GRAPH_USER_OBJECT_MOVE, new ones otherwise.
    pub fn hold(
        &mut self,
        holder: impl Into<Holder>,
        o: UserObjectId,
        count: u32,
        flags: u32,
    ) -> CuResult<()> {
        if flags & !GRAPH_USER_OBJECT_MOVE != 0 {
            return Err(invalid(format!(
                "flags {flags:#x}: only CU_GRAPH_USER_OBJECT_MOVE (1)"
            )));
        }
        if count == 0 {
            return Err(invalid("count is 0"));
        }
        if flags & GRAPH_USER_OBJECT_MOVE == 0 {
            self.retain(o, count)?;
        } else {
            self.object(o)?;
        }
        *self
            .owners
            .entry(holder.into())
            .or_default()
            .entry(o)
            .or_default() += u64::from(count);
        Ok(())
    }

    /// cuGraphReleaseUserObject: `holder` gives back `count` of its references.
    pub fn unhold(
        &mut self,
        holder: impl Into<Holder>,
        o: UserObjectId,
        count: u32,
    ) -> CuResult<Option<Destructor>> {
        let holder = holder.into();
        let held = self
            .owners
            .get(&holder)
            .and_then(|h| h.get(&o))
            .copied()
            .unwrap_or(0);
        if count == 0 || u64::from(count) > held {
            return Err(invalid(format!(
                "the graph holds {held} references of user object {o:#x}; {count} cannot go"
            )));
        }
        let h = self.owners.get_mut(&holder).expect("held");
        *h.get_mut(&o).expect("held") -= u64::from(count);
        if h[&o] == 0 {
            h.remove(&o);
        }
        Ok(self.drop_refs(o, u64::from(count)))
    }

    /// A new holder (an executable graph, a clone) takes the references `from` holds.
    pub fn copy_holder(&mut self, from: impl Into<Holder>, to: impl Into<Holder>) {
        let Some(held) = self.owners.get(&from.into()).cloned() else {
            return;
        };
        for (o, n) in &held {
            if let Some(obj) = self.objects.get_mut(o) {
                obj.refs += n;
            }
        }
        self.owners.insert(to.into(), held);
    }

    /// A holder goes (its graph or executable graph destroyed): its references with it.
    pub fn drop_holder(&mut self, holder: impl Into<Holder>) -> Vec<Destructor> {
        let Some(held) = self.owners.remove(&holder.into()) else {
            return Vec::new();
        };
        held.into_iter()
            .filter_map(|(o, n)| self.drop_refs(o, n))
            .collect()
    }
}

impl super::Driver {
    pub fn user_object_create(
        &self,
        destroy: Destructor,
        refs: u32,
        flags: u32,
    ) -> CuResult<UserObjectId> {
        self.state.lock().user_objects.create(destroy, refs, flags)
    }

    pub fn user_object_retain(&self, o: UserObjectId, count: u32) -> CuResult<()> {
        self.state.lock().user_objects.retain(o, count)
    }

    pub fn user_object_release(&self, o: UserObjectId, count: u32) -> CuResult<()> {
        let dead = self.state.lock().user_objects.release(o, count)?;
        run_destructors(dead.into_iter().collect());
        Ok(())
    }

    pub fn graph_retain_user_object(
        &self,
        g: GraphId,
        o: UserObjectId,
        count: u32,
        flags: u32,
    ) -> CuResult<()> {
        let mut st = self.state.lock();
        st.graphs.graph(g)?;
        st.user_objects.hold(g, o, count, flags)
    }

    pub fn graph_release_user_object(
        &self,
        g: GraphId,
        o: UserObjectId,
        count: u32,
    ) -> CuResult<()> {
        let dead = {
            let mut st = self.state.lock();
            st.graphs.graph(g)?;
            st.user_objects.unhold(g, o, count)?
        };
        run_destructors(dead.into_iter().collect());
        Ok(())
    }
}

/// Runs destructors on a thread of their own once every stream's queued work is done.
pub fn run_destructors(dead: Vec<Destructor>) {
    if dead.is_empty() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("cumock-user-object".into())
        .spawn(move || {
            super::stream_queues::drain_all();
            for d in dead {
                d();
            }
        });
    if let Err(e) = spawned {
        eprintln!("cumock: user objects' destructors not run: no thread for them ({e})");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    fn counted(hits: &Arc<AtomicU32>) -> Destructor {
        let h = hits.clone();
        Box::new(move || {
            h.fetch_add(1, Ordering::SeqCst);
        })
    }

    #[test]
    fn the_last_reference_of_any_holder_gives_the_destructor() {
        let hits = Arc::new(AtomicU32::new(0));
        let mut u = UserObjects::default();
        let o = u.create(counted(&hits), 1, NO_DESTRUCTOR_SYNC).unwrap();
        // The graph takes the program's reference (move), the executable graph a copy.
        let (g, e) = (GraphId::from_handle(1), ExecId::from_handle(2));
        u.hold(g, o, 1, GRAPH_USER_OBJECT_MOVE).unwrap();
        u.copy_holder(g, e);
        assert!(u.drop_holder(g).is_empty());
        assert!(
            u.release(o, 1).is_err(),
            "the program moved its reference away"
        );
        let dead = u.drop_holder(e);
        assert_eq!(dead.len(), 1);
        dead.into_iter().for_each(|d| d());
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        assert!(u.retain(o, 1).is_err(), "dead");
    }

    #[test]
    fn bad_counts_and_flags_are_refused_and_change_nothing() {
        let hits = Arc::new(AtomicU32::new(0));
        let mut u = UserObjects::default();
        assert!(u.create(counted(&hits), 1, 0).is_err());
        assert!(u.create(counted(&hits), 0, NO_DESTRUCTOR_SYNC).is_err());
        let o = u.create(counted(&hits), 2, NO_DESTRUCTOR_SYNC).unwrap();
        assert!(u.release(o, 3).is_err());
        let g = GraphId::from_handle(7);
        assert!(u.hold(g, o, 1, 2).is_err());
        assert!(u.unhold(g, o, 1).is_err(), "graph 7 holds nothing");
        u.hold(g, o, 2, 0).unwrap();
        assert!(u.unhold(g, o, 3).is_err());
        assert!(
            u.release(o, 2).unwrap().is_none(),
            "graph 7 still holds two"
        );
        assert!(u.unhold(g, o, 2).unwrap().is_some());
    }
}
