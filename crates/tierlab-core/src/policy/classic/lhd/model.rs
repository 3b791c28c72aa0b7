//! LHD's model of hit density: the EWMA of hits and evictions per class and age, the age
//! coarsening, and the densities computed from them at each reconfiguration.

use super::core::LhdCore;
use super::layout::*;

impl LhdCore {
    pub(super) fn reconfigure(&mut self) {
        for v in [&mut self.hits, &mut self.evictions] {
            for x in v.iter_mut() {
                *x *= EWMA_DECAY;
            }
        }
        self.adapt_age_coarsening();
        self.model_hit_density();
    }

    pub(super) fn adapt_age_coarsening(&mut self) {
        self.ewma_objects = self.ewma_objects * EWMA_DECAY + self.stamps.len() as f32;
        self.ewma_mass = self.ewma_mass * EWMA_DECAY + 1.0;
        let objects = self.ewma_objects / self.ewma_mass;
        let optimal = objects / (AGE_COARSENING_ERROR_TOLERANCE * MAX_AGE as f32);
        if self.reconfigurations != 5 && self.reconfigurations != 25 {
            return;
        }
        let mut log2 = 1u32;
        while ((1u64 << log2) as f32) < optimal {
            log2 += 1;
        }
        let delta = log2 as i32 - self.shift as i32;
        self.shift = log2;
        self.ewma_objects *= 8.0;
        self.ewma_mass *= 8.0;
        let classes = self
            .hits
            .chunks_mut(MAX_AGE)
            .chain(self.evictions.chunks_mut(MAX_AGE));
        for v in classes {
            if delta < 0 {
                // Stretch.
                let d = (-delta) as u32;
                let tail: f32 = v[(MAX_AGE >> d)..MAX_AGE - 1].iter().sum();
                v[MAX_AGE - 1] += tail;
                for a in (0..MAX_AGE - 1).rev() {
                    v[a] = v[a >> d] / (1u32 << d) as f32;
                }
            } else if delta > 0 {
                // Compress.
                let d = delta as u32;
                for a in 0..(MAX_AGE >> d) {
                    v[a] = (0..(1usize << d)).map(|i| v[(a << d) + i]).sum();
                }
                for x in &mut v[(MAX_AGE >> d)..MAX_AGE - 1] {
                    *x = 0.0;
                }
            }
        }
    }

    pub(super) fn model_hit_density(&mut self) {
        let classes = self
            .hits
            .chunks(MAX_AGE)
            .zip(self.evictions.chunks(MAX_AGE))
            .zip(self.densities.chunks_mut(STRIDE));
        for ((hit, evicted), density) in classes {
            let mut events = hit[MAX_AGE - 1] + evicted[MAX_AGE - 1];
            let mut hits = hit[MAX_AGE - 1];
            let mut lifetime = events;
            // The last age's density is never modelled (it stays `f32::MIN`, see `densities`).
            for a in (0..LAST_AGE).rev() {
                hits += hit[a];
                events += hit[a] + evicted[a];
                lifetime += events;
                density[a] = if events > 1e-5 { hits / lifetime } else { 0.0 };
            }
        }
        explorer_rows(&mut self.densities);
    }
}
