"""Real documents of every supported kind, made by the tests (PDF by fpdf2, DOCX by python-docx)."""

from __future__ import annotations

from pathlib import Path

# Words that occur in exactly one generated file (and nowhere in the shipped notes).
PDF_FACT = "SunVault storage bonus"
DOCX_FACT = "玄武验收单"
HTML_FACT = "青鸾电表"
MD_FACT = "赤霄巡检"
TXT_FACT = "白泽台账"
CSV_FACT = "Zephyrton"


def make_pdf(path: Path, pages: list[str], password: str | None = None) -> Path:
    """A PDF with one page per text (Latin text: fpdf2's core fonts have no CJK glyphs)."""
    from fpdf import FPDF

    pdf = FPDF()
    if password:
        pdf.set_encryption(owner_password="owner-" + password, user_password=password)
    pdf.set_font("Helvetica", size=12)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 8, text)
    pdf.output(str(path))
    return path


def policy_pages() -> list[str]:
    return [
        "Regional distributed PV handbook. Chapter one covers site surveys and roof load checks.",
        f"{PDF_FACT}: the Yuhang district pays 0.25 yuan per kWh discharged by rooftop SunVault "
        "storage systems that are connected behind the meter, for three years after acceptance.",
        "Chapter three lists inverter brands and their service hotlines.",
    ]


def make_docx(path: Path) -> Path:
    from docx import Document

    doc = Document()
    doc.add_heading("分布式光伏运维手册", level=1)
    doc.add_paragraph("本手册说明屋顶光伏电站的日常运维要求。")
    doc.add_heading("并网验收", level=2)
    doc.add_paragraph(f"并网验收时，施工单位须提交{DOCX_FACT}，由供电公司在五个工作日内完成现场核查。")
    doc.add_heading("清洗周期", level=2)
    doc.add_paragraph("沿海地区建议每季度清洗一次组件。")
    doc.save(str(path))
    return path


def make_all(folder: Path) -> dict[str, Path]:
    """One good file of each supported kind."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "pdf": make_pdf(folder / "policy.pdf", policy_pages()),
        "docx": make_docx(folder / "manual.docx"),
    }
    files["html"] = folder / "notice.html"
    files["html"].write_text(
        "<html><head><title>电价通知</title></head><body><h1>电价通知</h1><p>总则说明。</p>"
        f"<h2>计量装置</h2><p>新建项目须安装{HTML_FACT}，按月抄表结算。</p></body></html>",
        encoding="utf-8",
    )
    files["md"] = folder / "faq.md"
    files["md"].write_text(
        f"# 常见问题\n\n介绍。\n\n## 巡检制度\n\n电站每月执行{MD_FACT}，记录热斑和松动接头。\n",
        encoding="utf-8",
    )
    files["txt"] = folder / "log.txt"
    filler = "".join(
        f"第{i}行：设备巡视记录，天气晴，逆变器与汇流箱无异常，温度正常。\n" for i in range(1, 41)
    )
    files["txt"].write_text(filler + f"运维人员每天填写{TXT_FACT}并存档。\n", encoding="utf-8")  # line 41
    files["csv"] = folder / "tariffs.csv"
    files["csv"].write_text(
        f"city,price_yuan_per_kwh\nHangzhou,0.4153\n{CSV_FACT},0.3777\n", encoding="utf-8"
    )
    return files


def make_bad(folder: Path) -> dict[str, Path]:
    """An encrypted PDF, a corrupt PDF, a corrupt DOCX, an empty file, a PDF without text and a .txt of NULs."""
    folder.mkdir(parents=True, exist_ok=True)
    good = make_pdf(folder / "whole.pdf", policy_pages())
    broken = folder / "broken.pdf"
    broken.write_bytes(good.read_bytes()[:300])
    good.unlink()
    bad_docx = folder / "damaged.docx"
    bad_docx.write_bytes(b"PK\x03\x04 not really a zip archive")
    empty = folder / "empty.txt"
    empty.write_bytes(b"")
    nul = folder / "nul.txt"
    nul.write_bytes(b"\x00" * 1000)
    return {
        "locked": make_pdf(folder / "locked.pdf", policy_pages(), password="s3cret"),
        "broken": broken,
        "damaged": bad_docx,
        "empty": empty,
        "scanned": make_pdf(folder / "scanned.pdf", ["", ""]),
        "nul": nul,
    }
