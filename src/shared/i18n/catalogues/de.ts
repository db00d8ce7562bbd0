import type { Catalogue } from "./en.js";

/** German. */
export const de: Catalogue = {
  "layout.skip": "Zum Inhalt springen",
  "layout.sandboxLabel": "Umgebung",
  "layout.sandbox": "SANDBOX: Testumgebung, Dateien und Nachrichten sind nicht echt",
  "layout.footer":
    "Dateien werden bei der Übertragung und bei der Speicherung verschlüsselt. Diese Seite ist privat: Geben Sie ihren Link nicht weiter.",
  "layout.language": "Sprache",

  "notFound.title": "Link nicht gefunden",
  "notFound.heading": "Dieser Link ist ungültig",
  "notFound.body":
    "Der Link ist vielleicht falsch geschrieben, oder die Anfrage wurde zurückgezogen. Bitten Sie den Absender um einen neuen Link, wenn Sie ihn noch brauchen.",

  "expired.title": "Anfrage abgelaufen",
  "expired.heading": "Diese Anfrage ist abgelaufen",
  "expired.on": "Sie ist am {date} abgelaufen.",
  "expired.pull":
    "Sie nimmt keine Dateien mehr an. Wenn Sie sie noch senden müssen, bitten Sie den Anfragenden um einen neuen Link.",
  "expired.push":
    "Ihre Dateien sind nicht mehr verfügbar. Wenden Sie sich an den Absender, wenn Sie sie noch brauchen.",

  "card.sender": "Absender",
  "card.requestedBy": "Angefragt von",
  "card.requester": "Anfragender",
  "card.email": "E-Mail",
  "card.mobile": "Mobil",
  "card.company": "Firma",
  "card.location": "Ort",
  "message.heading": "Nachricht",

  "tfa.title": "Bestätigen Sie Ihre Identität",
  "tfa.intro":
    "Um {noun, select, session {diese Sitzung} other {diese Anfrage}} zu öffnen, geben Sie den Code ein, den wir per {channel, select, sms {SMS} other {E-Mail}} an {destination} senden.",
  "tfa.sent": "Wir haben einen 6-stelligen Code an {destination} gesendet. Er ist 10 Minuten gültig.",
  "tfa.wrong": "Dieser Code ist nicht richtig. {left, plural, one {Noch # Versuch} other {Noch # Versuche}}.",
  "tfa.locked":
    "Zu viele falsche Codes: Dieser Code ist gesperrt. Senden Sie einen neuen Code, um es erneut zu versuchen.",
  "tfa.lockedOut":
    "Es wurden zu viele falsche Codes eingegeben, deshalb ist dieser Link zu seinem Schutz gesperrt. Bitten Sie den Absender, Ihnen den Link erneut zu senden.",
  "tfa.expired": "Dieser Code ist abgelaufen. Senden Sie einen neuen Code.",
  "tfa.noCode": "Kein gültiger Code: Senden Sie zuerst einen neuen Code.",
  "tfa.malformed": "Geben Sie die 6 Ziffern des Codes ein.",
  "tfa.sendLimit":
    "Es wurden zu viele Codes gesendet. Sie können in {minutes, plural, one {# Minute} other {# Minuten}} einen neuen Code anfordern.",
  "tfa.codeLabel": "6-stelliger Code",
  "tfa.codeHint": "Der Code ist 10 Minuten gültig.",
  "tfa.verify": "Bestätigen",
  "tfa.send": "Code senden",
  "tfa.sendNew": "Neuen Code senden",
  "tfa.limitReached":
    "Code-Limit erreicht. Versuchen Sie es in {minutes, plural, one {# Minute} other {# Minuten}} erneut.",
  "tfa.messageSubject": "Ihr Bestätigungscode: {code}",
  "tfa.messageText":
    "Ihr {brand}-Bestätigungscode lautet {code}. Er läuft in {minutes, plural, one {# Minute} other {# Minuten}} ab. Geben Sie ihn nicht weiter.",

  "files.summary": "{count, plural, one {# Datei} other {# Dateien}} · {size}",
  "files.expiresIn.days": "läuft in {count, plural, one {# Tag} other {# Tagen}} ab",
  "files.expiresIn.hours": "läuft in {count, plural, one {# Stunde} other {# Stunden}} ab",
  "files.expiresIn.minutes": "läuft in {count, plural, one {# Minute} other {# Minuten}} ab",
  "files.expired": "abgelaufen",

  "push.title": "Dateien für Sie",
  "push.headingNamed": "{name} hat Ihnen Dateien gesendet",
  "push.files": "Dateien ({count, number})",
  "push.none": "Es sind keine Dateien verfügbar.",
  "push.downloadAll": "Alle herunterladen (ZIP)",
  "push.download": "Herunterladen",
  "push.downloadLabel": "{name} herunterladen",
  "push.availableUntil": "Verfügbar bis {date}.",

  "pull.title": "Dateien hochladen",
  "pull.headingNamed": "{name} bittet Sie um Dateien",
  "pull.yourFiles": "Ihre Dateien",
  "pull.allowedTypes": "Erlaubte Typen: {types}.",
  "pull.upTo": "Bis zu {size} pro Datei.",
  "pull.drop": "Ziehen Sie Dateien hierher, oder wählen Sie sie aus:",
  "pull.chooseLabel": "Dateien zum Hochladen auswählen",
  "pull.noscript":
    "Zum Hochladen wird JavaScript benötigt. Bitte aktivieren Sie es und laden Sie die Seite neu.",
  "pull.overall": "Gesamtfortschritt",
  "pull.pause": "Anhalten",
  "pull.resume": "Fortsetzen",
  "pull.uploads": "Uploads",
  "client.received": "Empfangen ({count, number})",
  "pull.replyLabel": "Nachricht an den Anfragenden (optional)",
  "pull.confirmEmpty": "Ohne Dateien absenden",
  "pull.emptyRefused":
    "Es wurde keine Datei hochgeladen: Kreuzen Sie dieses Feld an, um zu bestätigen, dass Sie keine senden.",
  "pull.emptyHint":
    "Es ist noch keine Datei hochgeladen. Kreuzen Sie dieses Feld nur an, wenn Sie nichts zu senden haben.",
  "pull.submit": "Absenden",
  "pull.submitHint":
    "Senden Sie ab, wenn alle Dateien hochgeladen sind. Danach können Sie keine Dateien mehr hinzufügen.",
  "submit.closed": "Diese Anfrage nimmt keine Dateien mehr an.",
  "submit.uploading":
    "Einige Dateien werden noch hochgeladen, oder ein früherer Upload ist unvollständig. Beenden oder entfernen Sie ihn, dann senden Sie ab.",
  "submit.empty":
    "Sie haben keine Datei hochgeladen. Kreuzen Sie „Ohne Dateien absenden“ an, um es zu bestätigen, oder fügen Sie zuerst Dateien hinzu.",
  "submit.emptySession":
    "Sie haben keine Datei hinzugefügt. Fügen Sie Dateien hinzu, oder bestätigen Sie, dass Sie ohne Dateien absenden möchten.",

  "done.title": "Anfrage abgeschlossen",
  "done.heading": "Vielen Dank, Ihre Dateien wurden gesendet",
  "done.sentOn": "Gesendet am {date}.",
  "done.complete": "Diese Anfrage ist abgeschlossen und nimmt keine Dateien mehr an.",
  "done.filesSent": "Gesendete Dateien",
  "done.yourMessage": "Ihre Nachricht",

  "session.defaultTitle": "Ihre sichere Sitzung",
  "session.from": "Von {name}",
  "session.for": "Für {name}",
  "session.summary":
    "{count, plural, one {# Element} other {# Elemente}} · {open, plural, one {# offen} other {# offen}}",
  "session.nothing":
    "Hier ist noch nichts für Sie. Der Absender kann später Dateien oder Anfragen hinzufügen.",
  "session.state.pending": "Offen",
  "session.state.complete": "Erledigt",
  "session.state.expired": "Abgelaufen",
  "session.expiredOn": "Abgelaufen am {date}.",
  "session.openUntil": "Offen bis {date}.",
  "session.wasOpenUntil": "War offen bis {date}.",
  "session.pushExpired":
    "Diese Dateien sind nicht mehr verfügbar. Wenden Sie sich an den Absender, wenn Sie sie noch brauchen.",
  "session.noFilesYet": "Noch keine Dateien. Der Absender hat hier noch keine Datei hinzugefügt.",
  "session.downloaded": "Heruntergeladen",
  "session.downloadAllLabel": "Alle {count, number} Dateien als eine ZIP-Datei herunterladen",
  "session.filesRequested": "Angefragte Dateien",
  "session.filesAskedFor": "Erbetene Dateien",
  "session.atMost": "Höchstens {count, plural, one {# Datei} other {# Dateien}}.",
  "session.chooseFor": "Dateien zum Hochladen für {title} auswählen",
  "session.thisRequest": "diese Anfrage",
  "session.sent": "Gesendet ({count, number})",
  "session.replyLabel": "Nachricht an den Absender (optional)",
  "session.sentOn": "Gesendet am {date}.",
  "session.sentDone": "Gesendet.",
  "session.featureExpired": "Diese Anfrage ist abgelaufen und nimmt keine Dateien mehr an.",
  "session.noticeSubmitted": "Vielen Dank, Ihre Dateien wurden gesendet.",
  "session.noticeReplied": "Ihre Antwort wurde gesendet.",
  "session.expiredTitle": "Sitzung abgelaufen",
  "session.expiredHeading": "Diese Sitzung ist abgelaufen",
  "session.expiredBody":
    "Ihre Dateien sind nicht mehr verfügbar, und sie nimmt keine Dateien mehr an. Wenden Sie sich an den Absender, wenn Sie noch etwas brauchen.",
  "chat.heading": "Nachrichten",
  "chat.empty": "Noch keine Nachrichten.",
  "chat.replyLabel": "Ihre Antwort",
  "chat.send": "Senden",
  "chat.closed": "Diese Unterhaltung ist geschlossen.",
  "chat.closedBySender":
    "Der Absender hat diese Unterhaltung geschlossen. Sie können sie hier weiterhin lesen.",
  "chat.tooFast":
    "Sie haben in kurzer Zeit viele Antworten gesendet. Warten Sie eine Minute und senden Sie Ihre Antwort dann erneut.",
  "chat.you": "Sie",
  "chat.tooLong": "Schreiben Sie eine Antwort mit höchstens 10.000 Zeichen.",
  "chat.refused": "Ihre Antwort konnte nicht gesendet werden: {reason}",

  "tooMany.title": "Zu viele Anfragen",
  "tooMany.body":
    "Dieser Link wurde in kurzer Zeit zu oft geöffnet. Warten Sie eine Minute und laden Sie die Seite dann neu.",

  "home.title": "Sicherer Dateiaustausch",
  "home.heading": "Ferry: sicherer Dateiaustausch",
  "home.body":
    "Hier werden Dateien über private Links gesendet und angefragt. Wenn Sie einen solchen Link per E-Mail oder SMS erhalten haben, öffnen Sie ihn von dort: Er führt zu Ihrer eigenen Seite.",
  "home.developers":
    "Für Entwickler: Die API ist unter {docs} beschrieben (OpenAPI-Dokument unter {openapi}).",
  "home.footer": "Ferry ist ein offener, selbst hostbarer Dienst für sicheren Dateiaustausch.",

  "filetype.document": "{format}-Dokument",
  "filetype.spreadsheet": "{format}-Tabelle",
  "filetype.presentation": "{format}-Präsentation",
  "filetype.image": "{format}-Bild",
  "filetype.archive": "{format}-Archiv",
  "filetype.audio": "{format}-Audio",
  "filetype.video": "{format}-Video",
  "filetype.file": "{format}-Datei",
  "filetype.message": "{format}-Nachricht",
  "filetype.text": "Textdatei",
  "filetype.webpage": "Webseite",
  "filetype.anyImage": "Bild",
  "filetype.anyVideo": "Video",
  "filetype.anyAudio": "Audio",
  "filetype.any": "Datei",

  "email.subject.push": "{name} hat Ihnen Dateien gesendet",
  "email.subject.pushAnonymous": "Sie haben Dateien erhalten",
  "email.subject.pull": "{name} bittet Sie um Dateien",
  "email.subject.pullAnonymous": "Sie wurden gebeten, Dateien hochzuladen",
  "email.subject.session": "{name} lädt Sie zu einer sicheren Sitzung ein",
  "email.subject.sessionAnonymous": "Sie wurden zu einer sicheren Sitzung eingeladen",
  "email.action.session": "Ihre sichere Sitzung öffnen",
  "email.action.push": "Dateien ansehen und herunterladen",
  "email.action.pull": "Ihre Dateien hochladen",
  "email.fallbackLink": "Wenn die Schaltfläche nicht funktioniert, öffnen Sie diese Adresse: {url}",
  "email.filesTotal": "{count, plural, one {# Datei} other {# Dateien}} · {size}",
  "email.availableUntil": "verfügbar bis {date}",
  "email.sandboxBanner": "SANDBOX: Diese Nachricht stammt aus einer Testinstallation.",
  "email.sandboxText": "Diese Nachricht stammt aus einer Testinstallation (Sandbox).",
  "sms.push": "{name} hat Ihnen Dateien gesendet:",
  "sms.pull": "{name} bittet Sie um Dateien:",
  "sender.someone": "Jemand",

  "client.waiting": "Wartet",
  "client.uploading": "Wird hochgeladen: {percent, number} %",
  "client.pausedAt": "Angehalten bei {percent, number} %",
  "client.retryingAt": "Verbindung bei {percent, number} % verloren: neuer Versuch",
  "client.uploaded": "Hochgeladen",
  "client.notUploaded": "Nicht hochgeladen",
  "client.removed": "Entfernt",
  "client.remove": "Entfernen",
  "client.removeLabel": "{name} entfernen",
  "client.progressLabel": "Upload-Fortschritt von {name}",
  "client.removedNotice": "{name} entfernt.",
  "client.removeFailed": "{name} konnte nicht entfernt werden: {reason}",
  "client.uploadedNotice": "{name} hochgeladen.",
  "client.fileError": "{name}: {reason}",
  "client.waitForUploads": "Warten Sie, bis alle Uploads abgeschlossen sind, und senden Sie dann ab.",
  "client.uploadsInProgress": "Uploads laufen: Absenden ist möglich, sobald sie fertig sind.",
  "client.submitHint":
    "Senden Sie ab, wenn alle Dateien hochgeladen sind. Danach können Sie keine Dateien mehr hinzufügen.",
  "client.paused": "Uploads angehalten.",
  "client.resumed": "Uploads fortgesetzt.",
  "client.unreadable": "Die Datei konnte nicht gelesen werden: Wählen Sie sie erneut aus.",
  "client.alreadyUploaded": "Bereits hochgeladen: Dieselbe Datei steht unter Empfangen.",
  "client.allDone": "Alle Uploads sind abgeschlossen. Sie können jetzt absenden.",
  "client.connectionLost": "Verbindung verloren. Neuer Versuch…",
  "client.connectionRestored": "Verbindung wiederhergestellt. {name} wird hochgeladen…",
  "client.overall":
    "{done, plural, other {#}} von {count, plural, one {# Datei} other {# Dateien}} hochgeladen · {sent} von {total} ({percent, number} %)",
  "client.speed": "{rate}/s",
  "client.secondsLeft": "noch etwa {count, plural, one {# Sekunde} other {# Sekunden}}",
  "client.minutesLeft": "noch etwa {count, plural, one {# Minute} other {# Minuten}}",
  "client.hoursLeft": "noch etwa {count, plural, one {# Stunde} other {# Stunden}}",
  "client.unfinishedRow":
    "Unvollständig ({received, plural, other {#}} von {total, plural, one {# Teil} other {# Teilen}}). Wählen Sie diese Datei erneut aus, um fortzufahren.",
  "client.unfinishedItem":
    "{name} ({received, plural, other {#}} von {total, plural, one {# Teil} other {# Teilen}})",
  "client.unfinishedNotice":
    "{count, plural, one {Unvollständiger früherer Upload: {list}. Wählen Sie dieselbe Datei erneut aus, um ihn abzuschließen, oder entfernen Sie ihn, und senden Sie dann ab.} other {Unvollständige frühere Uploads: {list}. Wählen Sie dieselben Dateien erneut aus, um sie abzuschließen, oder entfernen Sie sie, und senden Sie dann ab.}}",
  "client.duplicate": "{name} ist bereits in der Liste: Jede Datei wird nur einmal hinzugefügt.",
  "client.refusedType": "{name} wird nicht angenommen: Erlaubte Typen sind {types}.",
  "client.refusedEmpty": "{name} ist leer (0 Byte): Es gibt nichts hochzuladen.",
  "client.refusedSize": "{name} ist zu groß: Das Limit beträgt {size}.",
  "client.uploadFailed": "Upload fehlgeschlagen ({status, number})",
  "client.offline":
    "Sie sind offline. Uploads warten und werden fortgesetzt, sobald die Verbindung zurück ist.",
  "client.leaveWarning": "Ein Upload läuft. Die Seite trotzdem verlassen?",
  "client.dropAnywhere": "Dateien irgendwo ablegen, um sie hochzuladen",
  "client.chatEmptyReply": "Schreiben Sie zuerst eine Antwort.",
  "client.chatSending": "Wird gesendet…",
  "client.chatSent": "Gesendet.",
  "client.chatFailed": "Ihre Antwort konnte nicht gesendet werden. Versuchen Sie es erneut.",
  "client.chatClosed": "Diese Unterhaltung ist geschlossen.",
  "client.chatClosedBySender":
    "Der Absender hat diese Unterhaltung geschlossen. Sie können sie hier weiterhin lesen.",
  "client.chatTooFast":
    "Sie senden Antworten zu schnell. Warten Sie {seconds, plural, one {# Sekunde} other {# Sekunden}} und senden Sie sie dann erneut.",
  "size.B": "{value} B",
  "size.KB": "{value} KB",
  "size.MB": "{value} MB",
  "size.GB": "{value} GB",
  "size.TB": "{value} TB",
};
