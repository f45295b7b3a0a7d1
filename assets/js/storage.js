// afhttp storage snapshot: localStorage, sessionStorage, IndexedDB database names.
// Evaluated with awaitPromise; every part fails alone into an `*_error` field.
(async function () {
  'use strict';
  function dump(getStore) {
    var out = {};
    var store = getStore();
    for (var i = 0; i < store.length; i++) {
      var k = store.key(i);
      out[k] = store.getItem(k);
    }
    return out;
  }
  var snap = { schema_version: 1, url: location.href, origin: location.origin };
  try { snap.local_storage = dump(function () { return window.localStorage; }); }
  catch (e) { snap.local_storage = {}; snap.local_storage_error = String(e); }
  try { snap.session_storage = dump(function () { return window.sessionStorage; }); }
  catch (e) { snap.session_storage = {}; snap.session_storage_error = String(e); }
  try {
    var dbs = indexedDB.databases ? await indexedDB.databases() : [];
    snap.indexed_db = dbs.map(function (d) { return { name: d.name, version: d.version }; });
  } catch (e) {
    snap.indexed_db = [];
    snap.indexed_db_error = String(e);
  }
  return snap;
})()
