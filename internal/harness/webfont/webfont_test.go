package webfont

import (
	"bytes"
	"strings"
	"testing"
)

// The font is a WOFF2 file small enough to ride in every page, and its
// rule asks it for 双 alone.
func TestFaceCSS(t *testing.T) {
	if !bytes.HasPrefix(shuang, []byte("wOF2")) {
		t.Errorf("shuang.woff2 starts %q, want the WOFF2 signature wOF2", shuang[:min(4, len(shuang))])
	}
	if n := len(shuang); n == 0 || n > 4096 {
		t.Errorf("shuang.woff2: %d bytes, want one glyph's worth (at most 4 KiB)", n)
	}
	for _, want := range []string{`font-family: "` + Family + `"`, "src: url(data:font/woff2;base64,d09GMg", "unicode-range: U+53CC;"} {
		if !strings.Contains(FaceCSS, want) {
			t.Errorf("FaceCSS lacks %q:\n%s", want, FaceCSS)
		}
	}
	if strings.ContainsAny(FaceCSS, "<>") {
		t.Errorf("FaceCSS has a < or >: it must not end the page's <style>")
	}
}
