package write

import (
	"pidnode/handlev"
	"pidnode/model"
	"pidnode/registry"
	"pidnode/store"
)

// Reindex rebuilds the record indexes every write keeps (the URL and search
// indexes, registry.Reindex) from the records, by the URL value of the
// metadata model modelFile (nil = model.DefaultModel). It must not race with
// writers: call it offline (`pidnode import` does). It returns the number of
// URL index entries written.
func Reindex(db *store.DB, namer *handlev.Namer, modelFile []byte) (int, error) {
	if len(modelFile) == 0 {
		modelFile = model.DefaultModel
	}
	m, err := model.LoadModel(modelFile)
	if err != nil {
		return 0, err
	}
	return registry.Reindex(db, namer, m.URL.Index)
}
