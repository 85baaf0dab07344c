package proxy

import (
	"bytes"
	"testing"
)

// Keys are length-prefixed: parts that concatenate alike differ.
func TestResultKeyParts(t *testing.T) {
	if bytes.Equal(formatsKey([]int16{1}), formatsKey([]int16{0, 1})) || bytes.Equal(oidsKey([]uint32{25}), oidsKey(nil)) {
		t.Fatal("format or type lists collide")
	}
	if !cacheSettingOff("OFF") || !cacheSettingOff(" false ") || cacheSettingOff("on") || cacheSettingOff("") {
		t.Fatal("pgaccel.cache values")
	}
}
