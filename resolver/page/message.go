package page

// AppendMessage writes a page with a heading, one paragraph made of before +
// escaped(subject) + after, and the lookup form. before and after are trusted
// HTML.
func AppendMessage(dst []byte, title, before string, subject []byte, after string) []byte {
	dst = appendStart(dst, title)
	dst = append(dst, "<h1>"...)
	dst = AppendText(dst, title)
	dst = append(dst, "</h1>\n<p>"...)
	dst = append(dst, before...)
	dst = AppendText(dst, subject)
	dst = append(dst, after...)
	dst = append(dst, "</p>\n"...)
	dst = appendLookupForm(dst, nil)
	return appendEnd(dst)
}

// appendLookupForm writes the lookup form (GET /lookup?h=…), no JavaScript.
func appendLookupForm(dst, value []byte) []byte {
	dst = append(dst, "<form method=\"get\" action=\"/lookup\">\n<label for=\"h\" class=\"muted\">Identifier</label>\n"+
		"<input type=\"text\" id=\"h\" name=\"h\" placeholder=\"prefix/namespace/id\" autocomplete=\"off\" value=\""...)
	dst = AppendHTML(dst, value)
	return append(dst, "\" />\n<button type=\"submit\">Resolve</button>\n</form>\n"...)
}

// AppendHome writes the page served on "/": the lookup form and the
// prefixes served.
func AppendHome(dst []byte, prefixes []string) []byte {
	dst = appendStart(dst, "Identifier resolver")
	dst = append(dst, "<h1>Identifier resolver</h1>\n<p>Enter a persistent identifier to go to the resource it names. "+
		"Add <code>?noredirect</code> to an identifier URL to see the record instead.</p>\n"...)
	dst = appendLookupForm(dst, nil)
	if len(prefixes) > 0 {
		dst = append(dst, "<p class=\"muted\">Prefixes served here: "...)
		for i, p := range prefixes {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = append(dst, "<code>"...)
			dst = AppendHTML(dst, p)
			dst = append(dst, "</code>"...)
		}
		dst = append(dst, ".</p>\n"...)
	}
	dst = append(dst, "<p class=\"muted\">Machine access: <code>/api/handles/{identifier}</code> returns the record as Handle JSON.</p>\n"...)
	return appendEnd(dst)
}

// AppendLookup writes the home page with a problem (plain text, escaped)
// instead of its introduction, and value, what the reader entered, in the
// lookup form.
func AppendLookup(dst []byte, problem string, value []byte) []byte {
	dst = appendStart(dst, "Identifier resolver")
	dst = append(dst, "<h1>Identifier resolver</h1>\n<p>"...)
	dst = AppendHTML(dst, problem)
	dst = append(dst, "</p>\n"...)
	dst = appendLookupForm(dst, value)
	return appendEnd(dst)
}

// AppendReserved writes the 404 page of a SUBMITTED identifier: reserved,
// not yet public.
func AppendReserved(dst []byte, handle string) []byte {
	return AppendMessage(dst, "Reserved, not yet public", "The identifier <strong>", []byte(handle),
		"</strong> is reserved, not yet public. Its maintainer has registered it but not yet published it.")
}
