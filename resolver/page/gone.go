package page

import (
	"encoding/json"

	"pidnode/handlev"
	"pidnode/internal/ascii"
)

// relatedItem is the part of the RELATED JSON text (docs/metadata-model.md)
// the tombstone shows; of the RESOURCE text it shows what
// handlev.ReadResource reads.
type relatedItem struct {
	RelationType      string `json:"relation_type"`
	RelatedIdentifier struct {
		Type         string `json:"type"`
		Identifier   string `json:"identifier"`
		ResolvingURL string `json:"resolving_url"`
	} `json:"related_identifier"`
}

// firstIndex is the index of the first value of type typ (compared ASCII
// case-insensitively), -1 if there is none.
func firstIndex(vs []handlev.Value, typ string) int {
	for i := range vs {
		if ascii.EqualFold(vs[i].Type, typ) {
			return i
		}
	}
	return -1
}

// firstOfType is the data of the first value of type typ, nil if none.
func firstOfType(vs []handlev.Value, typ string) []byte {
	if i := firstIndex(vs, typ); i >= 0 {
		return vs[i].Data
	}
	return nil
}

// AppendGone writes the 410 tombstone of an OBSOLETED or DEPRECATED record
// (docs/product.md §5): identifier, status, label and description, the last
// landing page as text, related identifiers (links only to http/https), the
// curation contact.
func AppendGone(dst []byte, r *Record) []byte {
	var info handlev.Resource
	if b := firstOfType(r.Values, "RESOURCE"); b != nil {
		info, _, _ = handlev.ReadResource(b, nil) // a malformed RESOURCE text just shows nothing
	}
	var related []relatedItem
	if b := firstOfType(r.Values, handlev.TypeRelated); b != nil {
		_ = json.Unmarshal(b, &related)
	}
	status := r.Status.String()
	dst = appendStart(dst, "Gone: "+r.Handle)
	dst = append(dst, "<h1>"...)
	dst = AppendText(dst, r.Handle)
	dst = append(dst, "</h1>\n<p><span class=\"status\">"...)
	dst = append(dst, status...)
	dst = append(dst, "</span></p>\n<p>"...)
	if r.Status == handlev.StatusObsoleted {
		dst = append(dst, "This identifier is obsolete: the resource it named has been withdrawn or replaced. "...)
	} else {
		dst = append(dst, "This identifier is deprecated: it should no longer be used or cited. "...)
	}
	dst = append(dst, "Its record is kept so that existing citations stay meaningful.</p>\n<dl>\n<dt>Identifier</dt><dd>"...)
	dst = AppendText(dst, r.Handle)
	dst = append(dst, "</dd>\n<dt>Status</dt><dd>"...)
	dst = append(dst, status...)
	dst = append(dst, "</dd>\n"...)
	if ts := statusSince(r.Values); ts > 0 {
		if r.Status == handlev.StatusObsoleted {
			dst = append(dst, "<dt>Withdrawn on</dt><dd>"...)
		} else {
			dst = append(dst, "<dt>Deprecated on</dt><dd>"...)
		}
		dst = appendTimestamp(dst, ts)
		dst = append(dst, "</dd>\n"...)
	}
	if len(info.Label) != 0 {
		dst = append(dst, "<dt>Label</dt><dd>"...)
		dst = AppendText(dst, info.Label)
		dst = append(dst, "</dd>\n"...)
	}
	if len(info.Description) != 0 {
		dst = append(dst, "<dt>Description</dt><dd>"...)
		dst = AppendText(dst, info.Description)
		dst = append(dst, "</dd>\n"...)
	}
	if i := handlev.ChooseTarget(r.Values, nil); i >= 0 {
		dst = append(dst, "<dt>Last landing page</dt><dd class=\"v\" dir=\"ltr\">"...)
		dst = appendShown(dst, r.Values[i].Data)
		dst = append(dst, "</dd>\n"...)
	}
	if b := firstOfType(r.Values, handlev.TypeEmail); b != nil {
		dst = append(dst, "<dt>Curation contact</dt><dd>"...)
		dst = appendLinkedText(dst, b)
		dst = append(dst, "</dd>\n"...)
	}
	dst = append(dst, "</dl>\n"...)
	if len(related) > 0 {
		dst = append(dst, "<h2>Related identifiers</h2>\n<ul>\n"...)
		for _, rel := range related {
			id := rel.RelatedIdentifier
			dst = append(dst, "<li>"...)
			if rel.RelationType != "" {
				dst = AppendText(dst, rel.RelationType)
				dst = append(dst, ": "...)
			}
			text := id.Identifier
			if text == "" {
				text = id.ResolvingURL
			}
			href := []byte(nil)
			for _, u := range []string{id.ResolvingURL, id.Identifier} {
				if loc, err := handlev.AppendTargetURL(nil, []byte(u)); err == nil {
					href = loc
					break
				}
			}
			dst = append(dst, "<bdi dir=\"ltr\">"...)
			if href != nil {
				dst = append(dst, "<a href=\""...)
				dst = AppendHTML(dst, href)
				dst = append(dst, "\">"...)
				dst = appendShown(dst, text)
				dst = append(dst, "</a>"...)
			} else {
				dst = appendShown(dst, text)
			}
			dst = append(dst, "</bdi>"...)
			if id.Type != "" {
				dst = append(dst, " <span class=\"muted\">("...)
				dst = AppendText(dst, id.Type)
				dst = append(dst, ")</span>"...)
			}
			dst = append(dst, "</li>\n"...)
		}
		dst = append(dst, "</ul>\n"...)
	}
	dst = append(dst, "<p class=\"muted\"><a href=\"/"...)
	dst = AppendHTML(dst, r.Path)
	dst = append(dst, "?noredirect\">Full record</a> · <a href=\"/api/handles/"...)
	dst = AppendHTML(dst, r.Path)
	dst = append(dst, "\">Handle JSON</a></p>\n"...)
	return appendEnd(dst)
}

// statusSince is the time the record took its current status: the
// timestamp of its first public STATUS value, which a write renews only when
// the status changes (model.Build keeps an unchanged value's timestamp); 0
// when there is none (a STATUS without public read is not on public pages).
func statusSince(vs []handlev.Value) int64 {
	for i := range vs {
		if ascii.EqualFold(vs[i].Type, handlev.TypeStatus) {
			return vs[i].Timestamp
		}
	}
	return 0
}
