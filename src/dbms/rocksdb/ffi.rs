//! A small safe layer over RocksDB's C API (librocksdb-sys): options from an options string,
//! a database with column families, write batches, iterators, batched multi-get, properties,
//! flush and compaction, statistics. Only what the RocksDB target needs.
//!
//! Ownership: [`Db`] owns the database pointer through an `Arc`; every column family handle
//! ([`Cf`]) and iterator ([`Iter`]) holds that `Arc` too, so the database is closed only after
//! the last handle and iterator are destroyed, as RocksDB requires.

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, c_char};
use std::path::Path;
use std::ptr;
use std::sync::{Arc, RwLock};

use librocksdb_sys as sys;

/// A RocksDB status message turned into an error, or `Ok` when `err` is null (freeing it).
fn check(err: *mut c_char) -> Result<(), String> {
    if err.is_null() {
        return Ok(());
    }
    // SAFETY: RocksDB returns a malloc'ed NUL-terminated message, freed here once.
    let msg = unsafe { CStr::from_ptr(err) }.to_string_lossy().into_owned();
    unsafe { sys::rocksdb_free(err.cast()) };
    Err(msg)
}

/// `text` as a C string; an error for text with a NUL byte.
fn cstring(text: &str) -> Result<CString, String> {
    CString::new(text).map_err(|_| format!("{text:?} contains a NUL byte"))
}

/// Takes a malloc'ed C string from RocksDB (null: `None`).
fn take_string(raw: *mut c_char) -> Option<String> {
    if raw.is_null() {
        return None;
    }
    // SAFETY: a malloc'ed NUL-terminated string from RocksDB, freed here once.
    let text = unsafe { CStr::from_ptr(raw) }.to_string_lossy().into_owned();
    unsafe { sys::rocksdb_free(raw.cast()) };
    Some(text)
}

/// RocksDB `Options` (DB options and column family options together).
pub struct Options {
    raw: *mut sys::rocksdb_options_t,
}

// SAFETY: an options object is only read once built (opening, creating column families, reading
// statistics, all thread-safe in RocksDB); it is changed only through `&mut self`.
unsafe impl Send for Options {}
unsafe impl Sync for Options {}

impl Options {
    /// RocksDB's defaults.
    pub fn new() -> Self {
        // SAFETY: plain constructor.
        Options {
            raw: unsafe { sys::rocksdb_options_create() },
        }
    }

    /// These options with `text` (an options string, `name=value;...`) applied on top, as
    /// RocksDB parses it (`GetOptionsFromString`); RocksDB's message when it refuses it.
    pub fn with_string(&self, text: &str) -> Result<Options, String> {
        let c = cstring(text)?;
        let new = Options::new();
        let mut err = ptr::null_mut();
        // SAFETY: both options objects are live; `c` outlives the call.
        unsafe { sys::rocksdb_get_options_from_string(self.raw, c.as_ptr(), new.raw, &mut err) };
        check(err)?;
        Ok(new)
    }

    /// Creates the database and missing column families on open.
    pub fn set_create(&mut self) {
        // SAFETY: live options.
        unsafe {
            sys::rocksdb_options_set_create_if_missing(self.raw, 1);
            sys::rocksdb_options_set_create_missing_column_families(self.raw, 1);
        }
    }

    /// Collects statistics (tickers and histograms) from now on.
    pub fn enable_statistics(&mut self) {
        // SAFETY: live options.
        unsafe { sys::rocksdb_options_enable_statistics(self.raw) };
    }

    /// The statistics as RocksDB prints them (`name COUNT : n` lines), when enabled.
    pub fn statistics(&self) -> Option<String> {
        // SAFETY: live options; the result is malloc'ed or null.
        take_string(unsafe { sys::rocksdb_options_statistics_get_string(self.raw) })
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::new()
    }
}

impl Drop for Options {
    fn drop(&mut self) {
        // SAFETY: created by us, destroyed once.
        unsafe { sys::rocksdb_options_destroy(self.raw) };
    }
}

/// The open database pointer, closed when the last owner drops it.
struct Handle(*mut sys::rocksdb_t);

// SAFETY: a RocksDB database is safe to use from many threads at once.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: every column family handle and iterator holds an Arc of this handle, so they
        // are all gone when it is closed.
        unsafe { sys::rocksdb_close(self.0) };
    }
}

/// A column family handle.
pub struct Cf {
    raw: *mut sys::rocksdb_column_family_handle_t,
    /// Keeps the database open while the handle lives.
    _db: Arc<Handle>,
}

// SAFETY: column family handles are immutable and thread-safe in RocksDB.
unsafe impl Send for Cf {}
unsafe impl Sync for Cf {}

impl Drop for Cf {
    fn drop(&mut self) {
        // SAFETY: the handle is ours; the database (held by `db`) is still open.
        unsafe { sys::rocksdb_column_family_handle_destroy(self.raw) };
    }
}

/// Read and write options, created once per database.
struct Io {
    read: *mut sys::rocksdb_readoptions_t,
    write: *mut sys::rocksdb_writeoptions_t,
    flush: *mut sys::rocksdb_flushoptions_t,
}

// SAFETY: only read after construction; RocksDB takes them by const pointer.
unsafe impl Send for Io {}
unsafe impl Sync for Io {}

impl Drop for Io {
    fn drop(&mut self) {
        // SAFETY: created by us, destroyed once.
        unsafe {
            sys::rocksdb_readoptions_destroy(self.read);
            sys::rocksdb_writeoptions_destroy(self.write);
            sys::rocksdb_flushoptions_destroy(self.flush);
        }
    }
}

/// An SST file of the database.
#[derive(Clone, Debug)]
pub struct LiveFile {
    /// Its column family.
    pub cf: String,
    /// LSM level.
    pub level: i32,
    /// Smallest and largest user key.
    pub smallest: Vec<u8>,
    /// Largest user key.
    pub largest: Vec<u8>,
}

/// An open database with its column families.
pub struct Db {
    handle: Arc<Handle>,
    io: Io,
    options: Options,
    cfs: RwLock<BTreeMap<String, Arc<Cf>>>,
}

impl Db {
    /// Opens (creating when `options` say so) the database in `dir` with every column family
    /// it has, each with `options`.
    pub fn open(dir: &Path, options: Options, sync: bool) -> Result<Db, String> {
        let path = cstring(&dir.to_string_lossy())?;
        let names = list_cfs(&options, &path).unwrap_or_else(|_| vec!["default".to_string()]);
        let c_names = names
            .iter()
            .map(|n| cstring(n))
            .collect::<Result<Vec<_>, _>>()?;
        let name_ptrs: Vec<*const c_char> = c_names.iter().map(|c| c.as_ptr()).collect();
        let opts: Vec<*const sys::rocksdb_options_t> = vec![options.raw; names.len()];
        let mut handles = vec![ptr::null_mut(); names.len()];
        let mut err = ptr::null_mut();
        // SAFETY: arrays of `names.len()` entries, alive for the call.
        let raw = unsafe {
            sys::rocksdb_open_column_families(
                options.raw,
                path.as_ptr(),
                names.len() as i32,
                name_ptrs.as_ptr(),
                opts.as_ptr(),
                handles.as_mut_ptr(),
                &mut err,
            )
        };
        check(err)?;
        let handle = Arc::new(Handle(raw));
        let cfs = names
            .into_iter()
            .zip(handles)
            .map(|(n, raw)| {
                let cf = Cf {
                    raw,
                    _db: Arc::clone(&handle),
                };
                (n, Arc::new(cf))
            })
            .collect();
        // SAFETY: plain constructors and setters on fresh objects.
        let io = unsafe {
            let io = Io {
                read: sys::rocksdb_readoptions_create(),
                write: sys::rocksdb_writeoptions_create(),
                flush: sys::rocksdb_flushoptions_create(),
            };
            sys::rocksdb_writeoptions_set_sync(io.write, u8::from(sync));
            sys::rocksdb_flushoptions_set_wait(io.flush, 1);
            io
        };
        Ok(Db {
            handle,
            io,
            options,
            cfs: RwLock::new(cfs),
        })
    }

    /// The options the database was opened with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The column family `name`, when it exists.
    pub fn cf(&self, name: &str) -> Option<Arc<Cf>> {
        self.cfs.read().unwrap_or_else(|e| e.into_inner()).get(name).cloned()
    }

    /// Every column family, by name.
    pub fn cfs(&self) -> Vec<(String, Arc<Cf>)> {
        self.cfs
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(n, cf)| (n.clone(), Arc::clone(cf)))
            .collect()
    }

    /// Creates column family `name` with the database's options.
    pub fn create_cf(&self, name: &str) -> Result<Arc<Cf>, String> {
        let c = cstring(name)?;
        let mut cfs = self.cfs.write().unwrap_or_else(|e| e.into_inner());
        let mut err = ptr::null_mut();
        // SAFETY: live database and options.
        let raw = unsafe {
            sys::rocksdb_create_column_family(self.handle.0, self.options.raw, c.as_ptr(), &mut err)
        };
        check(err)?;
        let cf = Arc::new(Cf {
            raw,
            _db: Arc::clone(&self.handle),
        });
        cfs.insert(name.to_string(), Arc::clone(&cf));
        Ok(cf)
    }

    /// Drops column family `name` (its handle lives on until its last user lets it go).
    pub fn drop_cf(&self, name: &str) -> Result<(), String> {
        let mut cfs = self.cfs.write().unwrap_or_else(|e| e.into_inner());
        let Some(cf) = cfs.get(name) else {
            return Ok(());
        };
        let mut err = ptr::null_mut();
        // SAFETY: live database and handle.
        unsafe { sys::rocksdb_drop_column_family(self.handle.0, cf.raw, &mut err) };
        check(err)?;
        cfs.remove(name);
        Ok(())
    }

    /// Applies `batch` atomically.
    pub fn write(&self, batch: &WriteBatch) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: live database, options and batch.
        unsafe { sys::rocksdb_write(self.handle.0, self.io.write, batch.raw, &mut err) };
        check(err)
    }

    /// The value of `key` in `cf`.
    pub fn get(&self, cf: &Cf, key: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let mut len = 0;
        let mut err = ptr::null_mut();
        // SAFETY: live database, options, handle; `key` outlives the call.
        let raw = unsafe {
            sys::rocksdb_get_cf(
                self.handle.0,
                self.io.read,
                cf.raw,
                key.as_ptr().cast(),
                key.len(),
                &mut len,
                &mut err,
            )
        };
        check(err)?;
        if raw.is_null() {
            return Ok(None);
        }
        // SAFETY: `len` bytes malloc'ed by RocksDB, copied then freed once.
        let value = unsafe { std::slice::from_raw_parts(raw.cast::<u8>(), len) }.to_vec();
        unsafe { sys::rocksdb_free(raw.cast()) };
        Ok(Some(value))
    }

    /// Looks up `keys` (at most 16) in `cf` in one batched MultiGet; calls `found(i, value)`
    /// for each key `i` that exists.
    pub fn multi_get(
        &self,
        cf: &Cf,
        keys: &[[u8; 8]],
        mut found: impl FnMut(usize, &[u8]),
    ) -> Result<(), String> {
        const MAX: usize = 16;
        let n = keys.len().min(MAX);
        let mut key_ptrs = [ptr::null::<c_char>(); MAX];
        let sizes = [8usize; MAX];
        for (p, k) in key_ptrs.iter_mut().zip(keys) {
            *p = k.as_ptr().cast();
        }
        let mut values = [ptr::null_mut::<sys::rocksdb_pinnableslice_t>(); MAX];
        let mut errs = [ptr::null_mut::<c_char>(); MAX];
        // SAFETY: arrays of at least `n` entries, alive for the call.
        unsafe {
            sys::rocksdb_batched_multi_get_cf(
                self.handle.0,
                self.io.read,
                cf.raw,
                n,
                key_ptrs.as_ptr(),
                sizes.as_ptr(),
                values.as_mut_ptr(),
                errs.as_mut_ptr(),
                false,
            )
        };
        let mut first_err = Ok(());
        for i in 0..n {
            if let Err(e) = check(errs[i]) {
                first_err = first_err.and(Err(e));
            }
            let v = values[i];
            if !v.is_null() {
                let mut len = 0;
                // SAFETY: a slice RocksDB allocated for us; read, then destroyed once.
                unsafe {
                    let data = sys::rocksdb_pinnableslice_value(v, &mut len);
                    found(i, std::slice::from_raw_parts(data.cast::<u8>(), len));
                    sys::rocksdb_pinnableslice_destroy(v);
                }
            }
        }
        first_err
    }

    /// An iterator over `cf`, not positioned yet.
    pub fn iter(&self, cf: &Arc<Cf>) -> Iter {
        // SAFETY: live database, options and handle.
        let raw = unsafe { sys::rocksdb_create_iterator_cf(self.handle.0, self.io.read, cf.raw) };
        Iter {
            raw,
            _cf: Arc::clone(cf),
        }
    }

    /// An integer property of `cf` (`rocksdb.num-files-at-level0`).
    pub fn property_int(&self, cf: &Cf, name: &CStr) -> Option<u64> {
        let mut value = 0;
        // SAFETY: live database and handle; `name` is NUL-terminated.
        let rc = unsafe {
            sys::rocksdb_property_int_cf(self.handle.0, cf.raw, name.as_ptr(), &mut value)
        };
        (rc == 0).then_some(value)
    }

    /// A text property of `cf` (`rocksdb.cfstats-no-file-histogram`).
    pub fn property_text(&self, cf: &Cf, name: &CStr) -> Option<String> {
        // SAFETY: live database and handle; the result is malloc'ed or null.
        take_string(unsafe { sys::rocksdb_property_value_cf(self.handle.0, cf.raw, name.as_ptr()) })
    }

    /// Flushes `cf`'s memtables and waits for the flush.
    pub fn flush(&self, cf: &Cf) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: live database, options and handle.
        unsafe { sys::rocksdb_flush_cf(self.handle.0, self.io.flush, cf.raw, &mut err) };
        check(err)
    }

    /// Compacts the keys `start..=end` of `cf` (every level that overlaps them) and waits.
    pub fn compact_range(&self, cf: &Cf, start: &[u8], end: &[u8]) {
        // SAFETY: live database and handle; keys outlive the call.
        unsafe {
            sys::rocksdb_compact_range_cf(
                self.handle.0,
                cf.raw,
                start.as_ptr().cast(),
                start.len(),
                end.as_ptr().cast(),
                end.len(),
            )
        };
    }

    /// The database's SST files.
    pub fn live_files(&self) -> Vec<LiveFile> {
        // SAFETY: live database; the list is read and destroyed once.
        unsafe {
            let list = sys::rocksdb_livefiles(self.handle.0);
            if list.is_null() {
                return Vec::new();
            }
            let n = sys::rocksdb_livefiles_count(list);
            let key = |p: *const c_char, len: usize| {
                if p.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(p.cast::<u8>(), len).to_vec()
                }
            };
            let files = (0..n)
                .map(|i| {
                    let (mut sl, mut ll) = (0, 0);
                    let s = sys::rocksdb_livefiles_smallestkey(list, i, &mut sl);
                    let l = sys::rocksdb_livefiles_largestkey(list, i, &mut ll);
                    let cf = sys::rocksdb_livefiles_column_family_name(list, i);
                    LiveFile {
                        cf: if cf.is_null() {
                            String::new()
                        } else {
                            CStr::from_ptr(cf).to_string_lossy().into_owned()
                        },
                        level: sys::rocksdb_livefiles_level(list, i),
                        smallest: key(s, sl),
                        largest: key(l, ll),
                    }
                })
                .collect();
            sys::rocksdb_livefiles_destroy(list);
            files
        }
    }
}

/// Column family names of the database in `path` (an error when there is none yet).
fn list_cfs(options: &Options, path: &CStr) -> Result<Vec<String>, String> {
    let mut n = 0;
    let mut err = ptr::null_mut();
    // SAFETY: live options; the list is read and destroyed once.
    unsafe {
        let list = sys::rocksdb_list_column_families(options.raw, path.as_ptr(), &mut n, &mut err);
        check(err)?;
        let names = (0..n)
            .map(|i| CStr::from_ptr(*list.add(i)).to_string_lossy().into_owned())
            .collect();
        sys::rocksdb_list_column_families_destroy(list, n);
        Ok(names)
    }
}

/// A write batch, reused between writes.
pub struct WriteBatch {
    raw: *mut sys::rocksdb_writebatch_t,
}

// SAFETY: a batch is used by one thread at a time (`&mut self` to change it).
unsafe impl Send for WriteBatch {}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        // SAFETY: plain constructor.
        WriteBatch {
            raw: unsafe { sys::rocksdb_writebatch_create() },
        }
    }

    /// Adds `key = value` in `cf`.
    pub fn put(&mut self, cf: &Cf, key: &[u8], value: &[u8]) {
        // SAFETY: live batch and handle; the batch copies key and value.
        unsafe {
            sys::rocksdb_writebatch_put_cf(
                self.raw,
                cf.raw,
                key.as_ptr().cast(),
                key.len(),
                value.as_ptr().cast(),
                value.len(),
            )
        };
    }

    /// Adds the deletion of `key` in `cf`.
    pub fn delete(&mut self, cf: &Cf, key: &[u8]) {
        // SAFETY: live batch and handle; the batch copies the key.
        unsafe { sys::rocksdb_writebatch_delete_cf(self.raw, cf.raw, key.as_ptr().cast(), key.len()) };
    }

    /// Updates in the batch.
    pub fn len(&self) -> usize {
        // SAFETY: live batch.
        unsafe { sys::rocksdb_writebatch_count(self.raw) as usize }
    }

    /// True when the batch holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the batch, keeping its buffer.
    pub fn clear(&mut self) {
        // SAFETY: live batch.
        unsafe { sys::rocksdb_writebatch_clear(self.raw) };
    }
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

impl Drop for WriteBatch {
    fn drop(&mut self) {
        // SAFETY: created by us, destroyed once.
        unsafe { sys::rocksdb_writebatch_destroy(self.raw) };
    }
}

/// An iterator over one column family.
pub struct Iter {
    raw: *mut sys::rocksdb_iterator_t,
    _cf: Arc<Cf>,
}

impl Iter {
    /// Positions at the first key `>= key`.
    pub fn seek(&mut self, key: &[u8]) {
        // SAFETY: live iterator; RocksDB copies what it needs of the key.
        unsafe { sys::rocksdb_iter_seek(self.raw, key.as_ptr().cast(), key.len()) };
    }

    /// Positions at the first key.
    pub fn seek_to_first(&mut self) {
        // SAFETY: live iterator.
        unsafe { sys::rocksdb_iter_seek_to_first(self.raw) };
    }

    /// Positions at the last key.
    pub fn seek_to_last(&mut self) {
        // SAFETY: live iterator.
        unsafe { sys::rocksdb_iter_seek_to_last(self.raw) };
    }

    /// Moves to the next key.
    pub fn next(&mut self) {
        // SAFETY: live iterator, positioned (callers check `valid` first).
        unsafe { sys::rocksdb_iter_next(self.raw) };
    }

    /// Whether the iterator is at a key; `Err` when it stopped on an error.
    pub fn valid(&self) -> Result<bool, String> {
        // SAFETY: live iterator.
        if unsafe { sys::rocksdb_iter_valid(self.raw) } != 0 {
            return Ok(true);
        }
        let mut err = ptr::null_mut();
        // SAFETY: live iterator.
        unsafe { sys::rocksdb_iter_get_error(self.raw, &mut err) };
        check(err).map(|()| false)
    }

    /// The current key (valid until the iterator moves).
    pub fn key(&self) -> &[u8] {
        let mut len = 0;
        // SAFETY: live, valid iterator; the key lives until it moves (borrowed from self).
        unsafe {
            let p = sys::rocksdb_iter_key(self.raw, &mut len);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }

    /// The current value (valid until the iterator moves).
    pub fn value(&self) -> &[u8] {
        let mut len = 0;
        // SAFETY: live, valid iterator; the value lives until it moves (borrowed from self).
        unsafe {
            let p = sys::rocksdb_iter_value(self.raw, &mut len);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }
}

impl Drop for Iter {
    fn drop(&mut self) {
        // SAFETY: created by us, destroyed once, before its column family and database.
        unsafe { sys::rocksdb_iter_destroy(self.raw) };
    }
}

/// The calling thread's perf context counters `metrics` (RocksDB's C API ids), with counting
/// switched on for the thread (`rocksdb_enable_count`: counts, no timers) from the first call
/// on. RocksDB's perf context is per thread: only this thread's operations since then count.
pub fn thread_perf_counts(metrics: &[(i32, &'static str)]) -> Vec<(&'static str, u64)> {
    // SAFETY: sets a thread-local level; the context is created, read and destroyed here.
    unsafe {
        sys::rocksdb_set_perf_level(2);
        let ctx = sys::rocksdb_perfcontext_create();
        let out = metrics
            .iter()
            .map(|&(id, name)| (name, sys::rocksdb_perfcontext_metric(ctx, id)))
            .collect();
        sys::rocksdb_perfcontext_destroy(ctx);
        out
    }
}
