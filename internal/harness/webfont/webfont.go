// Package webfont holds the one web font the load generator's pages carry:
// the character 双 of their title, Double 11 (双11), so that it reads on a
// machine without a CJK font, where a browser draws a box in its place.
// The font travels inside the page, as a data URL: report.html and the
// live page fetch nothing.
//
// shuang.woff2 is Droid Sans Fallback cut down to that one glyph by
// scripts/webfont.sh; it is under the Apache License 2.0 (LICENSE beside
// it, and the font's own name table). Everything here is read-only and
// safe for concurrent use.
package webfont

import (
	_ "embed"
	"encoding/base64"
)

//go:embed shuang.woff2
var shuang []byte

// Family is the font family FaceCSS declares. A page names it in its font
// stack after the installed CJK faces and before the generic family, so
// that an installed face wins and this one fills in where there is none.
const Family = "flashsale shuang"

// FaceCSS is the @font-face rule of Family, for a page's style: the glyph
// inline, and a unicode-range of 双 (U+53CC) alone, so that the browser
// asks it for no other character.
var FaceCSS = `@font-face { font-family: "` + Family + `"; src: url(data:font/woff2;base64,` +
	base64.StdEncoding.EncodeToString(shuang) + `) format("woff2"); unicode-range: U+53CC; }`
