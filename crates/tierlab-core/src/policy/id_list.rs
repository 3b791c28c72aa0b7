//! Lists of page ids linked through entries kept per page id ([`IdList`]), for policies that
//! keep a page in several orders at once (LeCaR, Cacheus): each order's `[prev, next]` pair sits
//! in the page's one entry.

use super::list::{prefetch, NIL};

/// An entry kept per page id that can sit in several lists at once, one `[prev, next]` pair
/// per list ([`IdList`]). Linking page ids through their own entries, as LIRS does, puts a
/// page's place in every order it is kept in (and whatever else the policy records) in one
/// entry: a reference reads one entry instead of an id -> slot table and a node per order, and
/// the replay loop's prefetch hint can load it, and then its neighbours, ahead of time.
pub trait IdLinks {
    /// The entry's link pairs, one per list kind.
    fn links(&self) -> &[[u32; 2]];
    fn links_mut(&mut self) -> &mut [[u32; 2]];
}

/// Implements [`IdLinks`] for an entry type whose `links` field holds its link pairs.
macro_rules! id_links_in_field {
    ($entry:ty) => {
        impl $crate::policy::id_list::IdLinks for $entry {
            #[inline(always)]
            fn links(&self) -> &[[u32; 2]] {
                &self.links
            }
            #[inline(always)]
            fn links_mut(&mut self) -> &mut [[u32; 2]] {
                &mut self.links
            }
        }
    };
}
pub(crate) use id_links_in_field;

/// A doubly linked list of page ids through their entries' link pair `W` (see [`IdLinks`]).
/// Front = most recent.
#[derive(Debug, Clone, Copy)]
pub struct IdList<const W: usize> {
    head: u32,
    tail: u32,
    len: usize,
}

impl<const W: usize> Default for IdList<W> {
    fn default() -> Self {
        IdList {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl<const W: usize> IdList<W> {
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The front id, or [`NIL`].
    #[inline(always)]
    pub fn head(&self) -> u32 {
        self.head
    }
    /// The back id, or [`NIL`].
    #[inline(always)]
    pub fn tail(&self) -> u32 {
        self.tail
    }
    #[inline(always)]
    pub fn push_front<E: IdLinks>(&mut self, e: &mut [E], i: u32) {
        let old = self.head;
        e[i as usize].links_mut()[W] = [NIL, old];
        if old != NIL {
            e[old as usize].links_mut()[W][0] = i;
        } else {
            self.tail = i;
        }
        self.head = i;
        self.len += 1;
    }
    #[inline(always)]
    pub fn push_back<E: IdLinks>(&mut self, e: &mut [E], i: u32) {
        let old = self.tail;
        e[i as usize].links_mut()[W] = [old, NIL];
        if old != NIL {
            e[old as usize].links_mut()[W][1] = i;
        } else {
            self.head = i;
        }
        self.tail = i;
        self.len += 1;
    }
    /// Unlinks `i`, which must be in this list.
    #[inline(always)]
    pub fn unlink<E: IdLinks>(&mut self, e: &mut [E], i: u32) {
        let [p, n] = e[i as usize].links()[W];
        if p != NIL {
            e[p as usize].links_mut()[W][1] = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            e[n as usize].links_mut()[W][0] = p;
        } else {
            self.tail = p;
        }
        self.len -= 1;
    }
    #[inline(always)]
    pub fn move_to_front<E: IdLinks>(&mut self, e: &mut [E], i: u32) {
        if self.head != i {
            self.unlink(e, i);
            self.push_front(e, i);
        }
    }
    /// Unlinks and returns the back id, or [`NIL`] when empty.
    #[inline(always)]
    pub fn pop_back<E: IdLinks>(&mut self, e: &mut [E]) -> u32 {
        let t = self.tail;
        if t != NIL {
            self.unlink(e, t);
        }
        t
    }
    /// Ids from front to back.
    pub fn iter<'a, E: IdLinks>(&self, e: &'a [E]) -> impl Iterator<Item = u32> + 'a {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            (cur != NIL).then(|| {
                let i = cur;
                cur = e[i as usize].links()[W][1];
                i
            })
        })
    }
}

/// Starts loading the entries linked to `e` through pair `w` (its neighbours in that list,
/// whose links unlinking `e` rewrites).
#[inline(always)]
pub fn prefetch_neighbours<E: IdLinks>(entries: &[E], e: &E, w: usize) {
    let [p, n] = e.links()[w];
    if p != NIL {
        prefetch(entries, p as usize);
    }
    if n != NIL {
        prefetch(entries, n as usize);
    }
}

/// Starts loading the entry before `id`'s in list pair `w` (toward the front): the one a later
/// pop from that list's back reaches after `id`. Nothing when `id` or its predecessor is NIL.
#[inline(always)]
pub fn prefetch_before<E: IdLinks>(entries: &[E], id: u32, w: usize) {
    if id != NIL {
        let p = entries[id as usize].links()[w][0];
        if p != NIL {
            prefetch(entries, p as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_lists_keep_two_orders_in_one_entry() {
        struct E([[u32; 2]; 2]);
        impl IdLinks for E {
            fn links(&self) -> &[[u32; 2]] {
                &self.0
            }
            fn links_mut(&mut self) -> &mut [[u32; 2]] {
                &mut self.0
            }
        }
        let mut e: Vec<E> = (0..5).map(|_| E([[NIL; 2]; 2])).collect();
        let (mut a, mut b) = (IdList::<0>::default(), IdList::<1>::default());
        for i in 0..5 {
            a.push_front(&mut e, i);
            b.push_back(&mut e, i);
        }
        a.move_to_front(&mut e, 1);
        b.unlink(&mut e, 3);
        assert_eq!(a.iter(&e).collect::<Vec<_>>(), vec![1, 4, 3, 2, 0]);
        assert_eq!(b.iter(&e).collect::<Vec<_>>(), vec![0, 1, 2, 4]);
        assert_eq!(a.pop_back(&mut e), 0);
        assert_eq!((a.len(), a.head(), a.tail()), (4, 1, 2));
        assert_eq!((b.len(), b.head(), b.tail()), (4, 0, 4));
        let mut c = IdList::<0>::default();
        assert!(c.is_empty());
        assert_eq!(c.pop_back(&mut e), NIL);
    }
}
