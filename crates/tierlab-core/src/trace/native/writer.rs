//! Writing a native trace: records into compressed blocks, then the trailer and footer.

use super::codec::*;
use super::*;

/// Streams records into a native trace: `create`, `push` records, `finish`
/// with the app names.
pub struct NativeWriter<W: Write> {
    w: W,
    name: String,
    opts: WriterOptions,
    offset: u64,
    pending: Vec<Record>,
    payload: Vec<u8>,
    columns: [Vec<u8>; N_COLUMNS],
    totals: NativeTotals,
}

impl NativeWriter<BufWriter<File>> {
    /// Creates (or truncates) `path` with the default options.
    pub fn create(path: &Path, page_size: u32) -> Result<Self> {
        Self::create_with(path, page_size, WriterOptions::default())
    }

    pub fn create_with(path: &Path, page_size: u32, opts: WriterOptions) -> Result<Self> {
        let f = File::create(path).map_err(|e| Error::io(path, e))?;
        NativeWriter::new(
            BufWriter::with_capacity(1 << 20, f),
            &path.display().to_string(),
            page_size,
            opts,
        )
    }
}

impl<W: Write> NativeWriter<W> {
    /// Starts a native trace on any writer; `name` is used in error messages.
    pub fn new(w: W, name: &str, page_size: u32, opts: WriterOptions) -> Result<Self> {
        if opts.records_per_block == 0 || opts.records_per_block > MAX_BLOCK_RECORDS {
            return Err(Error::config(format!(
                "records_per_block must be in 1..={MAX_BLOCK_RECORDS}, got {}",
                opts.records_per_block
            )));
        }
        if !(1..=22).contains(&opts.level) {
            return Err(Error::config(format!(
                "zstd level must be in 1..=22, got {}",
                opts.level
            )));
        }
        let mut wr = NativeWriter {
            w,
            name: name.to_string(),
            opts,
            offset: 0,
            pending: Vec::with_capacity(opts.records_per_block as usize),
            payload: Vec::new(),
            columns: Default::default(),
            totals: NativeTotals::default(),
        };
        let mut h = Vec::with_capacity(HEADER_LEN as usize);
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&VERSION.to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes());
        h.extend_from_slice(&page_size.to_le_bytes());
        h.extend_from_slice(&opts.records_per_block.to_le_bytes());
        let crc = crc32fast::hash(&h);
        h.extend_from_slice(&crc.to_le_bytes());
        wr.write(&h)?;
        Ok(wr)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.w
            .write_all(bytes)
            .map_err(|e| Error::io(&self.name, e))?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Appends one record.
    #[inline]
    pub fn push(&mut self, r: &Record) -> Result<()> {
        self.pending.push(*r);
        if self.pending.len() >= self.opts.records_per_block as usize {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Appends records.
    pub fn push_all(&mut self, rs: &[Record]) -> Result<()> {
        for r in rs {
            self.push(r)?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let n = self.pending.len();
        for c in &mut self.columns {
            c.clear();
        }
        let [tags, time, page, opkind, app, npages, evkind, evapp] = &mut self.columns;
        tags.resize(n.div_ceil(8), 0);
        let (mut prev_t, mut prev_p) = (0u64, 0u64);
        let (mut n_acc, mut n_ev) = (0usize, 0u32);
        for (i, r) in self.pending.iter().enumerate() {
            match r {
                Record::Access(a) => {
                    put_varint(time, zigzag(a.time.wrapping_sub(prev_t) as i64));
                    prev_t = a.time;
                    put_varint(page, zigzag(a.page.wrapping_sub(prev_p) as i64));
                    prev_p = a.page;
                    if n_acc % 4 == 0 {
                        opkind.push(0);
                    }
                    let bits = (a.op as u8) | ((a.kind as u8) << 1);
                    *opkind.last_mut().expect("pushed above") |= bits << (2 * (n_acc % 4));
                    put_varint(app, a.app as u64);
                    put_varint(npages, a.npages as u64);
                    n_acc += 1;
                }
                Record::Event(e) => {
                    tags[i / 8] |= 1 << (i % 8);
                    put_varint(time, zigzag(e.time.wrapping_sub(prev_t) as i64));
                    prev_t = e.time;
                    evkind.push(e.kind as u8);
                    put_varint(evapp, e.app as u64);
                    n_ev += 1;
                }
            }
        }
        self.payload.clear();
        for c in &self.columns {
            self.payload
                .extend_from_slice(&(c.len() as u32).to_le_bytes());
        }
        for c in &self.columns {
            self.payload.extend_from_slice(c);
        }
        let comp = zstd::bulk::compress(&self.payload, self.opts.level)
            .map_err(|e| Error::io(&self.name, e))?;
        let mut h = Vec::with_capacity(BLOCK_HEADER_LEN);
        h.extend_from_slice(&BLOCK_MAGIC);
        h.extend_from_slice(&(n as u32).to_le_bytes());
        h.extend_from_slice(&n_ev.to_le_bytes());
        h.extend_from_slice(&(self.payload.len() as u32).to_le_bytes());
        h.extend_from_slice(&(comp.len() as u32).to_le_bytes());
        h.extend_from_slice(&self.totals.records.to_le_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&h);
        crc.update(&comp);
        h.extend_from_slice(&crc.finalize().to_le_bytes());
        self.write(&h)?;
        self.write(&comp)?;
        self.totals.blocks += 1;
        self.totals.records += n as u64;
        self.totals.events += n_ev as u64;
        self.pending.clear();
        Ok(())
    }

    /// Writes the last block, the app-name table and the footer; returns the
    /// underlying writer (flushed) and the totals.
    pub fn finish(mut self, app_names: &[String]) -> Result<(W, NativeTotals)> {
        self.flush_block()?;
        let trailer_offset = self.offset;
        let mut body = Vec::new();
        body.extend_from_slice(&self.totals.blocks.to_le_bytes());
        body.extend_from_slice(&self.totals.records.to_le_bytes());
        body.extend_from_slice(&self.totals.events.to_le_bytes());
        body.extend_from_slice(&(app_names.len() as u32).to_le_bytes());
        for name in app_names {
            body.extend_from_slice(&(name.len() as u32).to_le_bytes());
            body.extend_from_slice(name.as_bytes());
        }
        let mut t = Vec::with_capacity(body.len() + 12);
        t.extend_from_slice(&TRAILER_MAGIC);
        t.extend_from_slice(&(body.len() as u32).to_le_bytes());
        t.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        t.extend_from_slice(&body);
        t.extend_from_slice(&trailer_offset.to_le_bytes());
        t.extend_from_slice(&FOOTER_MAGIC);
        self.write(&t)?;
        self.w.flush().map_err(|e| Error::io(&self.name, e))?;
        self.totals.bytes = self.offset;
        Ok((self.w, self.totals))
    }
}
